//! Start-up: connect the database and broker, run migrations, build the
//! service context, bind the HTTP server. `main` and the integration tests
//! both start servers through here.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;

use actix_web::web;

use crate::http::head_limits::Guarded;
use anyhow::Context as _;

use crate::broker::SharedBroker;
use crate::broker::memory::MemoryBroker;
use crate::broker::redis::RedisBroker;
use crate::config::{Config, DatabaseConfig};
use crate::data_dir;
use crate::metrics::Metrics;
use crate::service::Context;
use crate::service::passwords::Passwords;
use crate::service::tokens::Tokens;
use crate::store::Db;
use crate::time::TimeSource;

/// How long in-flight requests get to finish after SIGTERM.
const SHUTDOWN_GRACE_SECS: u64 = 20;

/// Name of the generated secret in the data folder.
const SECRET_FILE: &str = "jwt-secret";

/// A bound server, not yet running: await or spawn [`Bound::server`].
pub struct Bound {
    /// The address it listens on (the real port when bound to port 0).
    pub addr: SocketAddr,
    /// The shared service context (tests use it to reach workers and the database).
    pub ctx: Context,
    /// The server future; also its handle for stopping.
    pub server: actix_web::dev::Server,
}

/// Connects everything and returns the service context.
///
/// # Errors
/// The database cannot be migrated, Redis cannot be reached, or the secret cannot be read or written.
pub async fn context(config: Config, time: Arc<dyn TimeSource>) -> anyhow::Result<Context> {
    // A configuration built in code skips `Config::from_env`'s check.
    if let Some(secret) = &config.jwt_secret {
        crate::config::check_jwt_secret(secret)?;
    }
    let uses_data_dir = config.jwt_secret.is_none()
        || matches!(&config.database, DatabaseConfig::Sqlite(path) if path.starts_with(&config.data_dir));
    if uses_data_dir {
        data_dir::ensure_private_dir(&config.data_dir)
            .with_context(|| format!("preparing the data folder {}", config.data_dir.display()))?;
    }
    let db = Db::with_options(
        &config.database,
        config.db_pool_size,
        config.db_prepared_statements,
    )?
    .with_pipeline(
        &config.database,
        config.db_pipeline_size,
        config.db_prepared_statements,
    );
    let migrator = db.clone();
    let applied = tokio::task::spawn_blocking(move || migrator.migrate())
        .await?
        .context("running database migrations")?;
    tracing::info!(backend = ?db.backend(), migrations.applied = applied, "database ready");

    let broker: SharedBroker = match &config.redis_url {
        Some(url) if config.redis_cluster => {
            let nodes: Vec<&str> = url.split(',').map(str::trim).collect();
            RedisBroker::connect_cluster(&nodes, &config.redis_prefix)
                .await
                .with_context(|| format!("connecting to the Redis Cluster at {}", redact(url)))?
        }
        Some(url) => RedisBroker::connect(url, &config.redis_prefix)
            .await
            .with_context(|| format!("connecting to Redis at {}", redact(url)))?,
        None => MemoryBroker::new(),
    };
    tracing::info!(broker = broker.kind(), "broker ready");

    let secret = match &config.jwt_secret {
        Some(secret) => secret.clone(),
        None => generated_secret(&config.data_dir)?,
    };
    let tokens = Tokens::new(secret.as_bytes(), config.access_token_ttl)?;
    let passwords = tokio::task::spawn_blocking(Passwords::new).await??;
    Ok(Context {
        config: Arc::new(config),
        db,
        broker,
        time,
        tokens,
        passwords,
        metrics: Arc::new(Metrics::default()),
        signals: Arc::default(),
        streams: Arc::default(),
        instance: crate::ids::record_id().into(),
        sweep_from: Arc::default(),
        shutdown: crate::service::Shutdown::default(),
    })
}

/// Binds the HTTP server for `ctx` on its configured address.
///
/// This is what `actix_web::HttpServer` does (same timeouts), assembled by
/// hand so each connection is read through [`Guarded`]: request heads over
/// the limits get a problem+json answer instead of actix-http's bare 400.
///
/// # Errors
/// The address cannot be bound.
pub fn bind(ctx: Context) -> anyhow::Result<Bound> {
    use actix_service::ServiceFactoryExt as _;
    let listener = TcpListener::bind(&ctx.config.bind)
        .with_context(|| format!("binding {}", ctx.config.bind))?;
    let addr = listener.local_addr()?;
    let data = web::Data::new(ctx.clone());
    // Signals are handled by `serve_until_signal`, so streams and workers can be told first.
    let builder = actix_server::Server::build()
        .workers(ctx.config.http_workers)
        .disable_signals()
        .shutdown_timeout(SHUTDOWN_GRACE_SECS)
        .backlog(1024);
    let shutdown = builder.graceful_shutdown_signal();
    let server = builder
        .listen("uttt-http", listener, move || {
            let shutdown = shutdown.clone();
            let app = actix_service::map_config(
                actix_service::IntoServiceFactory::into_factory(crate::http::app(data.clone()))
                    .map_err(|err: actix_web::Error| err.error_response()),
                |()| actix_web::dev::AppConfig::default(),
            );
            let http = actix_http::HttpService::build()
                .graceful_shutdown_signal(move || {
                    let signal = shutdown.clone();
                    async move { signal.notified().await }
                })
                .keep_alive(actix_http::KeepAlive::default())
                .client_request_timeout(std::time::Duration::from_secs(5))
                .client_disconnect_timeout(std::time::Duration::from_secs(1))
                // A client that closes its side closes the connection: an event
                // stream then ends at once, and with it the player's presence lease.
                .h1_allow_half_closed(false)
                .local_addr(addr)
                .h1(app);
            actix_service::fn_service(|io: actix_web::rt::net::TcpStream| {
                let peer = io.peer_addr().ok();
                let _ = io.set_nodelay(true);
                std::future::ready(Ok::<_, actix_http::error::DispatchError>((
                    Guarded::new(io),
                    peer,
                )))
            })
            .and_then(http)
        })?
        .run();
    crate::worker::start(&ctx);
    tracing::info!(%addr, "listening");
    Ok(Bound { addr, ctx, server })
}

/// Runs a bound server until SIGTERM or SIGINT, then shuts down gracefully:
/// stop accepting connections, close event streams with a retry hint, let
/// in-flight requests (and their transactions) finish, stop the workers
/// (which release their broker locks at the end of the current tick), and
/// close the database connections.
///
/// # Errors
/// The server fails, or signals cannot be installed.
pub async fn serve_until_signal(bound: Bound) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let handle = bound.server.handle();
    let shutdown = bound.ctx.shutdown.clone();
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let server = tokio::spawn(bound.server);
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = int.recv() => tracing::info!("SIGINT: shutting down"),
    }
    shutdown.trigger();
    // While the HTTP workers, whose runtimes run their sockets, still run.
    if let Some(pipeline) = bound.ctx.db.pipeline() {
        pipeline.close(std::time::Duration::from_secs(1)).await;
    }
    handle.stop(true).await;
    server.await??;
    // A worker dropped mid-tick would leave its broker lock until the lock's
    // TTL runs out, holding up the other instances.
    let grace = std::time::Duration::from_secs(SHUTDOWN_GRACE_SECS);
    if tokio::time::timeout(grace, shutdown.workers_stopped())
        .await
        .is_err()
    {
        tracing::warn!("workers still running after the grace period");
    }
    // Now rather than with the context's last copy, which an HTTP worker's
    // thread drops after the server stopped, racing the process's exit.
    let db = bound.ctx.db.clone();
    let closed =
        tokio::task::spawn_blocking(move || db.close(std::time::Duration::from_secs(1))).await;
    if !matches!(closed, Ok(true)) {
        tracing::warn!("database connections still in use at exit");
    }
    tracing::info!("stopped");
    Ok(())
}

/// Reads the secret kept in the data folder (narrowing its mode to 0600 if
/// it was wider), or makes one.
fn generated_secret(dir: &Path) -> anyhow::Result<String> {
    let path = dir.join(SECRET_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let secret = text.trim().to_owned();
        if crate::config::check_jwt_secret(&secret).is_ok() {
            data_dir::ensure_private_file(&path)
                .with_context(|| format!("narrowing the mode of {}", path.display()))?;
            return Ok(secret);
        }
    }
    data_dir::ensure_private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    let secret = crate::ids::secret(48);
    write_private(&path, &secret).with_context(|| format!("writing {}", path.display()))?;
    tracing::warn!(
        path = %path.display(),
        "UTTT_JWT_SECRET is not set: generated a secret and stored it in the data folder; \
         set UTTT_JWT_SECRET (the same on every instance) in production"
    );
    Ok(secret)
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())?;
    // `mode` only applies to a file it creates: an old one keeps its bits.
    data_dir::ensure_private_file(path).map(|_| ())
}

/// A URL with its password replaced, for logs.
fn redact(url: &str) -> String {
    if url.contains(',') {
        // A cluster's node list: each URL on its own.
        return url.split(',').map(redact).collect::<Vec<_>>().join(",");
    }
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_urls_are_redacted() {
        assert_eq!(redact("redis://:hunter2@h:6379/0"), "redis://:***@h:6379/0");
        assert_eq!(redact("postgres://u:pw@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("redis://h:6379"), "redis://h:6379");
    }

    #[test]
    fn the_generated_secret_is_kept_and_reused() {
        let dir = std::env::temp_dir().join(format!("uttt-secret-{}", crate::ids::record_id()));
        let first = generated_secret(&dir).unwrap();
        let second = generated_secret(&dir).unwrap();
        assert_eq!(first, second);
        assert!(first.len() >= 32);
        #[cfg(unix)]
        {
            assert_eq!(data_dir::mode_of(&dir).unwrap(), 0o700);
            assert_eq!(data_dir::mode_of(&dir.join(SECRET_FILE)).unwrap(), 0o600);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_old_secret_file_readable_by_others_is_narrowed_and_a_weak_one_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("uttt-secret-{}", crate::ids::record_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(SECRET_FILE);
        let kept = crate::ids::secret(48);
        std::fs::write(&path, &kept).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(generated_secret(&dir).unwrap(), kept);
        assert_eq!(data_dir::mode_of(&path).unwrap(), 0o600);
        // A weak one (too short) is replaced, and the new file is private too.
        std::fs::write(&path, "short").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let fresh = generated_secret(&dir).unwrap();
        assert_ne!(fresh, "short");
        assert_eq!(data_dir::mode_of(&path).unwrap(), 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
