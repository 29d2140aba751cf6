//! Ranked play: players and ratings written straight to the database,
//! tickets, and waiting for a pairing.

use std::time::Duration;

use serde_json::json;
use uttt::time::TimeSource;

use super::app::TestApp;
use super::wait::eventually;
use crate::common::http::Player;

impl TestApp {
    /// A player inserted straight into the database with a token, for tests
    /// that need many players (registration's password hashing is the slow part).
    pub async fn quick_player(&self, username: &str) -> Player {
        let id = uttt::ids::player_id();
        let (pid, name) = (id.clone(), username.to_owned());
        let now = self.time.now_ms();
        self.ctx
            .db
            .run(move |conn| {
                uttt::store::players::insert(
                    conn,
                    &uttt::store::players::NewPlayer {
                        id: &pid,
                        username: &name,
                        username_key: &name.to_ascii_lowercase(),
                        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$unusable",
                        role: "player",
                        created_at: now,
                    },
                )
            })
            .await
            .expect("insert player");
        Player {
            token: self
                .ctx
                .tokens
                .issue(&id, "player", &uttt::ids::record_id())
                .expect("token"),
            id,
            username: username.to_owned(),
            password: String::new(),
            refresh: String::new(),
        }
    }

    /// Sets a player's rating on a ladder directly.
    pub async fn set_rating(&self, player: &Player, ladder: &str, rating: f64, deviation: f64) {
        let (pid, lid) = (player.id.clone(), ladder.to_owned());
        let now = self.time.now_ms();
        self.ctx
            .db
            .run(move |conn| -> uttt::service::Result<()> {
                let mut row = uttt::service::ladders::ensure(conn, &pid, &lid, now)?;
                row.rating = rating;
                row.deviation = deviation;
                row.established = deviation <= 110.0;
                uttt::store::ratings::save(conn, &row)?;
                Ok(())
            })
            .await
            .expect("set rating");
    }

    /// The stored rating row of a player.
    pub async fn rating_row(
        &self,
        player: &Player,
        ladder: &str,
    ) -> uttt::store::ratings::RatingRow {
        let (pid, lid) = (player.id.clone(), ladder.to_owned());
        self.ctx
            .db
            .run(move |conn| uttt::store::ratings::get(conn, &pid, &lid))
            .await
            .expect("rating")
            .expect("rating row")
    }

    /// Queues a player; returns the ticket id.
    pub async fn queue(&self, player: &Player, ladder: &str) -> String {
        let reply = self
            .post(
                "/api/v1/matchmaking/tickets",
                &json!({"ladder": ladder}),
                Some(&player.token),
            )
            .await;
        reply.expect(201);
        reply.body["id"].as_str().expect("ticket id").to_owned()
    }

    /// Waits until a ticket is matched; returns the match id.
    pub async fn matched(&self, player: &Player, ticket: &str) -> String {
        let path = format!("/api/v1/matchmaking/tickets/{ticket}");
        eventually(Duration::from_secs(20), "a pairing", || async {
            let t = self.get(&path, Some(&player.token)).await;
            t.body["match_id"].as_str().map(str::to_owned)
        })
        .await
    }

    /// Queues `a` and `b` on `ladder`, runs one pairing round, and returns
    /// the ranked match it made of them (both tickets point at it).
    pub async fn ranked_match(&self, a: &Player, b: &Player, ladder: &str) -> String {
        let ta = self.queue(a, ladder).await;
        let tb = self.queue(b, ladder).await;
        let round = uttt::worker::pairing::tick(&self.ctx)
            .await
            .expect("pairing round");
        assert_eq!(round.matched, 1, "one pair made");
        let id = self.matched(a, &ta).await;
        assert_eq!(self.matched(b, &tb).await, id, "both in the same match");
        id
    }
}
