//! Command-line subcommands that are not the server: their arguments and
//! their output. Printing and timing live here, never in the pure layers.

pub mod arena_bench;
pub mod bot;
pub mod cpu_bench;
pub mod history_bench;
pub mod leaderboard_bench;
pub mod on_cpu;
pub mod pairing_bench;
pub mod perft;
pub mod recompute;
pub mod replay;
pub mod seed;
pub mod selfplay;

/// Inserts a player for a bench: its password hash matches no password, so
/// nobody can log in as it.
fn insert_bench_player(
    conn: &mut crate::store::DbConnection,
    id: &str,
    name: &str,
    now: crate::time::Millis,
) -> Result<(), crate::store::StoreError> {
    crate::store::players::insert(conn, &bench_player(id, name, now))
}

/// A bench player (see [`insert_bench_player`]), for a multi-row insert.
fn bench_player<'a>(
    id: &'a str,
    name: &'a str,
    now: crate::time::Millis,
) -> crate::store::players::NewPlayer<'a> {
    crate::store::players::NewPlayer {
        id,
        username: name,
        username_key: name,
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$YmVuY2hiZW5jaA$unusable",
        role: "player",
        created_at: now,
    }
}
