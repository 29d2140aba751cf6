//! Matches: addresses and legal moves, rooms, playing scripts, and the
//! consistency audit of a stored match.

use serde_json::{Value, json};

use super::app::TestApp;
use crate::common::http::{Player, Reply};

/// The legal moves of a match state, as `"4.0"` texts.
pub fn legal_of(state: &Value) -> Vec<String> {
    state["next"]["legal"]
        .as_array()
        .expect("legal moves")
        .iter()
        .map(|a| {
            a.as_array()
                .expect("an address")
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect()
}

/// `"4.0"` → `[4, 0]`.
pub fn addr(text: &str) -> Vec<u8> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split('.')
        .map(|c| c.parse().expect("coordinate"))
        .collect()
}

impl TestApp {
    /// Opens a room as `host` and seats `guest`; returns the match id (host is X).
    pub async fn room_match(
        &self,
        host: &Player,
        guest: &Player,
        depth: u8,
        time_control: Value,
    ) -> String {
        let room = self
            .post(
                "/api/v1/rooms",
                &json!({"depth": depth, "time_control": time_control}),
                Some(&host.token),
            )
            .await;
        room.expect(201);
        let code = room.body["code"].as_str().expect("code").to_owned();
        let joined = self
            .post(
                &format!("/api/v1/rooms/{code}/join"),
                &json!({}),
                Some(&guest.token),
            )
            .await;
        joined.expect(200);
        joined.body["match_id"]
            .as_str()
            .expect("match id")
            .to_owned()
    }

    /// Plays `address` (dotted) at `ply` as `player`.
    pub async fn play(&self, player: &Player, match_id: &str, ply: u64, address: &str) -> Reply {
        self.post(
            &format!("/api/v1/matches/{match_id}/moves"),
            &json!({"ply": ply, "address": addr(address)}),
            Some(&player.token),
        )
        .await
    }

    /// Plays a whole script, alternating `x` and `o` from ply 0; returns the last reply.
    pub async fn play_script(
        &self,
        x: &Player,
        o: &Player,
        match_id: &str,
        moves: &[&str],
    ) -> Reply {
        let mut last = None;
        for (ply, address) in moves.iter().enumerate() {
            let mover = if ply % 2 == 0 { x } else { o };
            let reply = self.play(mover, match_id, ply as u64, address).await;
            reply.expect(200);
            last = Some(reply);
        }
        last.expect("a non-empty script")
    }

    /// The match state as `player` sees it.
    pub async fn state(&self, player: &Player, match_id: &str) -> Value {
        let reply = self
            .get(&format!("/api/v1/matches/{match_id}"), Some(&player.token))
            .await;
        reply.expect(200);
        reply.body
    }

    /// The stored row of a match (it must exist).
    pub async fn match_row(&self, match_id: &str) -> uttt::store::matches::MatchRow {
        let id = match_id.to_owned();
        self.ctx
            .db
            .run(move |conn| uttt::store::matches::get(conn, &id))
            .await
            .expect("read the match")
            .expect("the match exists")
    }

    /// Audits the stored match (`uttt::service::audit`): its moves rows are
    /// numbered from 0 and alternate from X, the position decoded from the
    /// match row is their replay, and the stored result follows from it (or
    /// from a timeout/resignation).
    pub async fn assert_consistent(&self, match_id: &str) {
        use uttt::service::audit::{StoredMatch, audit};
        let id = match_id.to_owned();
        let (row, moves) = self
            .ctx
            .db
            .run(move |conn| {
                crate::common::db::in_one_snapshot(conn, |conn| {
                    let row = uttt::store::matches::get(conn, &id)?.expect("match row");
                    let moves = uttt::store::matches::moves(conn, &id)?;
                    Ok((row, moves))
                })
            })
            .await
            .unwrap();
        let found = audit(&StoredMatch::from_rows(&row, &moves));
        assert!(found.is_empty(), "match {match_id}: {found:#?}");
    }
}
