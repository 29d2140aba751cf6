//! The `uttt` command line: `serve` (the default), `migrate`, `openapi`,
//! `admin`, and the game-core tools.

use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use uttt::config::Config;
use uttt::service::accounts::{self, Role};
use uttt::store::Db;
use uttt::time::SystemTime;

/// The ranked Ultimate Tic-Tac-Toe server. Configuration comes from the
/// environment (see the README).
#[derive(Debug, Parser)]
#[command(name = "uttt", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP server and its workers (the default).
    Serve,
    /// Apply pending database migrations and exit.
    Migrate,
    /// Print the OpenAPI document.
    Openapi,
    /// Count move sequences from the empty board (perft) and time the move generator.
    Perft(uttt::cli::perft::PerftArgs),
    /// Benchmarks: the CPU player's speed, and some that need the configured database and broker.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
    /// Let two CPU players (levels 1..=5, or uctN) play each other and print A's score with a 95% interval.
    Selfplay(uttt::cli::selfplay::SelfplayArgs),
    /// Re-play an admin export (NDJSON) through the rules; report records whose result does not follow.
    Replay(uttt::cli::replay::ReplayArgs),
    /// Play as a bot account through the public HTTP API, with the built-in CPU
    /// (README, "Write a bot").
    Bot(uttt::cli::bot::BotArgs),
    /// Exit 0 when the server at `UTTT_BIND` answers `/readyz` with 200 (for container health checks).
    Healthcheck,
    /// Administration from the command line.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Queue tickets of spread ratings and time the pairing rounds until all are paired.
    Pairing(uttt::cli::pairing_bench::PairingBenchArgs),
    /// An arena with N players waiting in its pool: time its pairing passes.
    Arena(uttt::cli::arena_bench::ArenaBenchArgs),
    /// Random playouts and MCTS iterations per second of the CPU player, at each depth (no database).
    Cpu(uttt::cli::cpu_bench::CpuBenchArgs),
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Give a player the admin role.
    Promote {
        /// The player's username.
        username: String,
    },
    /// Take the admin role away.
    Demote {
        /// The player's username.
        username: String,
    },
    /// Fill the database with synthetic finished matches, for measuring.
    Seed(uttt::cli::seed::SeedArgs),
    /// Time every filter of the admin match history (p50/p95).
    BenchHistory(uttt::cli::history_bench::BenchHistoryArgs),
    /// Time a ladder's leaderboard (p50/p95), optionally seeding rated players first.
    BenchLeaderboard(uttt::cli::leaderboard_bench::BenchLeaderboardArgs),
    /// Replay a ladder's rated matches in order and list every stored rating
    /// that differs from the replay (exit status 1 when any does).
    RecomputeRatings(uttt::cli::recompute::RecomputeArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
        Command::Migrate => {
            let config = load_config()?;
            let db = Db::with_options(&config.database, 1, config.db_prepared_statements)?;
            let applied = db.migrate()?;
            println!("applied {applied} migration(s)");
            Ok(())
        }
        Command::Healthcheck => healthcheck(),
        Command::Bot(args) => {
            uttt::telemetry::init(uttt::config::LogFormat::Human);
            uttt::cli::bot::run(&args)
        }
        Command::Perft(args) => uttt::cli::perft::run(&args, &mut std::io::stdout().lock()),
        Command::Selfplay(args) => uttt::cli::selfplay::run(&args, &mut std::io::stdout().lock()),
        // Needs no database: dispatched before any configuration is loaded.
        Command::Bench {
            command: BenchCommand::Cpu(args),
        } => uttt::cli::cpu_bench::run(&args, &mut std::io::stdout().lock()),
        Command::Bench {
            command: BenchCommand::Arena(args),
        } => {
            let config = load_config()?;
            actix_web::rt::System::new().block_on(uttt::cli::arena_bench::run(
                config,
                &args,
                &mut std::io::stdout().lock(),
            ))
        }
        Command::Bench {
            command: BenchCommand::Pairing(args),
        } => {
            let config = load_config()?;
            actix_web::rt::System::new().block_on(uttt::cli::pairing_bench::run(
                config,
                &args,
                &mut std::io::stdout().lock(),
            ))
        }
        Command::Replay(args) => {
            if uttt::cli::replay::run(&args, &mut std::io::stdout().lock())? {
                Ok(())
            } else {
                std::process::exit(1)
            }
        }
        Command::Openapi => {
            print!("{}", uttt::http::openapi::document_json()?);
            Ok(())
        }
        Command::Admin { command } => {
            let config = load_config()?;
            let db = Db::with_options(&config.database, 1, config.db_prepared_statements)?;
            db.migrate()?;
            let out = &mut std::io::stdout().lock();
            match &command {
                AdminCommand::Promote { username } | AdminCommand::Demote { username } => {
                    let role = if matches!(command, AdminCommand::Promote { .. }) {
                        Role::Admin
                    } else {
                        Role::Player
                    };
                    let mut conn = db.get()?;
                    accounts::set_role(&mut conn, username, role)
                        .with_context(|| format!("setting the role of {username}"))?;
                    println!("{username} is now {}", role.as_str());
                    Ok(())
                }
                AdminCommand::Seed(args) => {
                    uttt::cli::seed::run(&db, &config.ladders, config.rating_growth, args, out)
                }
                AdminCommand::BenchHistory(args) => uttt::cli::history_bench::run(&db, args, out),
                AdminCommand::BenchLeaderboard(args) => {
                    uttt::cli::leaderboard_bench::run(&db, config.rating_growth, args, out)
                }
                AdminCommand::RecomputeRatings(args) => {
                    let found = uttt::cli::recompute::run(&db, &config, args, out)?;
                    if !found.differences.is_empty() {
                        std::process::exit(1)
                    }
                    Ok(())
                }
            }
        }
    }
}

fn load_config() -> anyhow::Result<Config> {
    let config = Config::from_env()?;
    uttt::telemetry::init(config.log_format);
    Ok(config)
}

fn serve() -> anyhow::Result<()> {
    let config = load_config()?;
    uttt::alloc::return_large_blocks();
    actix_web::rt::System::new().block_on(async move {
        let ctx = uttt::server::context(config, Arc::new(SystemTime)).await?;
        let bound = uttt::server::bind(ctx)?;
        uttt::server::serve_until_signal(bound).await
    })
}

/// A dependency-free HTTP/1.0 probe of `/readyz`, so container images need no curl.
fn healthcheck() -> anyhow::Result<()> {
    use std::io::{Read, Write};
    use std::time::Duration;
    let config = Config::from_env()?;
    let bind = config.bind.replace("0.0.0.0", "127.0.0.1");
    let addr: std::net::SocketAddr = bind.parse().with_context(|| format!("UTTT_BIND {bind}"))?;
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(3))?;
    stream.set_read_timeout(Some(Duration::from_secs(3)))?;
    stream.write_all(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    let status = reply.lines().next().unwrap_or_default();
    anyhow::ensure!(status.contains(" 200 "), "not ready: {status}");
    println!("ready");
    Ok(())
}
