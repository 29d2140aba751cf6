//! The diesel schema, shared by both backends (the migrations keep the tables and
//! columns identical; some foreign keys exist on SQLite only, see the PostgreSQL
//! migrations `*_without_*_keys`).

diesel::table! {
    players (id) {
        id -> Text,
        username -> Text,
        username_key -> Text,
        password_hash -> Text,
        role -> Text,
        created_at -> BigInt,
        bot -> Bool,
        accept_bot_challenges -> Bool,
    }
}

diesel::table! {
    refresh_tokens (id) {
        id -> Text,
        player_id -> Text,
        family_id -> Text,
        token_hash -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::joinable!(refresh_tokens -> players (player_id));
diesel::allow_tables_to_appear_in_same_query!(players, refresh_tokens);

diesel::table! {
    matches (id) {
        id -> Text,
        mode -> Text,
        ladder -> Nullable<Text>,
        rated -> Bool,
        depth -> SmallInt,
        tc_kind -> Text,
        tc_initial_ms -> Nullable<BigInt>,
        tc_increment_ms -> Nullable<BigInt>,
        tc_turn_ms -> Nullable<BigInt>,
        x_player_id -> Nullable<Text>,
        o_player_id -> Nullable<Text>,
        x_controller -> Text,
        o_controller -> Text,
        cpu_level -> Nullable<SmallInt>,
        position -> Binary,
        ply -> Integer,
        to_move -> Nullable<Text>,
        x_bank_ms -> Nullable<BigInt>,
        o_bank_ms -> Nullable<BigInt>,
        turn_started_at -> BigInt,
        deadline_at -> Nullable<BigInt>,
        awaiting_cpu -> Bool,
        cpu_claimed_until -> Nullable<BigInt>,
        status -> Text,
        winner -> Nullable<Text>,
        reason -> Nullable<Text>,
        room_code -> Nullable<Text>,
        version -> Integer,
        created_at -> BigInt,
        finished_at -> Nullable<BigInt>,
        x_lag_quota_ms -> Nullable<BigInt>,
        o_lag_quota_ms -> Nullable<BigInt>,
    }
}

diesel::table! {
    moves (match_id, ply) {
        match_id -> Text,
        ply -> Integer,
        seat -> Text,
        square -> Integer,
        played_at -> BigInt,
        clock_ms -> Nullable<BigInt>,
        by_cpu -> Bool,
    }
}

diesel::table! {
    rooms (code) {
        code -> Text,
        host_id -> Text,
        guest_id -> Nullable<Text>,
        depth -> SmallInt,
        tc_kind -> Text,
        tc_initial_ms -> Nullable<BigInt>,
        tc_increment_ms -> Nullable<BigInt>,
        tc_turn_ms -> Nullable<BigInt>,
        match_id -> Nullable<Text>,
        games -> Integer,
        created_at -> BigInt,
    }
}

diesel::joinable!(moves -> matches (match_id));
diesel::allow_tables_to_appear_in_same_query!(players, matches, moves, rooms);

diesel::table! {
    ratings (player_id, ladder) {
        player_id -> Text,
        ladder -> Text,
        rating -> Double,
        deviation -> Double,
        volatility -> Double,
        established -> Bool,
        games -> Integer,
        wins -> Integer,
        losses -> Integer,
        draws -> Integer,
        last_x_at -> Nullable<BigInt>,
        last_opponent_id -> Nullable<Text>,
        updated_at -> BigInt,
        rated_at -> Nullable<BigInt>,
        established_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    rating_changes (match_id, seat) {
        match_id -> Text,
        seat -> Text,
        player_id -> Text,
        ladder -> Text,
        score -> Double,
        rating_before -> Double,
        rating_after -> Double,
        deviation_before -> Double,
        deviation_after -> Double,
        volatility_before -> Double,
        volatility_after -> Double,
        created_at -> BigInt,
    }
}

diesel::joinable!(ratings -> players (player_id));
diesel::allow_tables_to_appear_in_same_query!(ratings, players);

diesel::table! {
    tickets (id) {
        id -> Text,
        player_id -> Text,
        ladder -> Text,
        rating -> Double,
        status -> Text,
        match_id -> Nullable<Text>,
        reason -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    match_players (match_id, seat) {
        match_id -> Text,
        seat -> Text,
        player_id -> Text,
        created_at -> BigInt,
        mode -> Text,
        active -> Bool,
    }
}

diesel::joinable!(match_players -> matches (match_id));
diesel::allow_tables_to_appear_in_same_query!(match_players, matches);
diesel::allow_tables_to_appear_in_same_query!(match_players, tickets);

diesel::table! {
    challenges (id) {
        id -> Text,
        challenger_id -> Text,
        challenged_id -> Text,
        depth -> SmallInt,
        tc_kind -> Text,
        tc_initial_ms -> Nullable<BigInt>,
        tc_increment_ms -> Nullable<BigInt>,
        tc_turn_ms -> Nullable<BigInt>,
        seat -> Text,
        ladder -> Nullable<Text>,
        status -> Text,
        decline_reason -> Nullable<Text>,
        match_id -> Nullable<Text>,
        created_at -> BigInt,
        expires_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    tournaments (id) {
        id -> Text,
        name -> Text,
        kind -> Text,
        status -> Text,
        director_id -> Text,
        depth -> SmallInt,
        tc_kind -> Text,
        tc_initial_ms -> Nullable<BigInt>,
        tc_increment_ms -> Nullable<BigInt>,
        tc_turn_ms -> Nullable<BigInt>,
        ladder -> Nullable<Text>,
        rated -> Bool,
        rounds -> Nullable<Integer>,
        round -> Integer,
        round_pause_ms -> BigInt,
        duration_ms -> Nullable<BigInt>,
        starts_at -> Nullable<BigInt>,
        ends_at -> Nullable<BigInt>,
        next_at -> Nullable<BigInt>,
        max_players -> Nullable<Integer>,
        entry_code -> Nullable<Text>,
        min_rating -> Nullable<Double>,
        players -> Integer,
        version -> Integer,
        sort_at -> BigInt,
        created_at -> BigInt,
        finished_at -> Nullable<BigInt>,
        tallied -> Bool,
    }
}

diesel::table! {
    tournament_players (tournament_id, player_id) {
        tournament_id -> Text,
        player_id -> Text,
        rating -> Double,
        withdrawn -> Bool,
        joined_at -> BigInt,
        back_at -> Nullable<BigInt>,
        removed -> Bool,
        points -> Integer,
        games -> Integer,
        wins -> Integer,
        draws -> Integer,
        losses -> Integer,
        berserks -> Integer,
        streak -> Integer,
        performance_sum -> Double,
        x_games -> Integer,
        o_games -> Integer,
        last_seat -> Nullable<Text>,
        last_opponent_id -> Nullable<Text>,
        last_end_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    tournament_rounds (tournament_id, round) {
        tournament_id -> Text,
        round -> Integer,
        bye_player_id -> Nullable<Text>,
        paired_at -> BigInt,
    }
}

diesel::table! {
    tournament_games (match_id) {
        match_id -> Text,
        tournament_id -> Text,
        round -> Integer,
        board -> Integer,
        x_player_id -> Text,
        o_player_id -> Text,
        result -> Nullable<Text>,
        created_at -> BigInt,
        x_berserk -> Bool,
        o_berserk -> Bool,
    }
}

diesel::joinable!(tournament_players -> players (player_id));
diesel::joinable!(tournament_games -> matches (match_id));
diesel::joinable!(tournament_games -> tournaments (tournament_id));
diesel::allow_tables_to_appear_in_same_query!(
    tournaments,
    tournament_players,
    tournament_rounds,
    tournament_games
);
diesel::allow_tables_to_appear_in_same_query!(tournament_players, players);
diesel::allow_tables_to_appear_in_same_query!(tournament_games, matches);

diesel::table! {
    analyses (match_id) {
        match_id -> Text,
        status -> Text,
        plies_done -> Integer,
        plies_total -> Integer,
        result -> Text,
        requested_by -> Nullable<Text>,
        claimed_by -> Nullable<Text>,
        claimed_at -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}
