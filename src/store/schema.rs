//! The diesel schema, shared by both backends (the migrations keep the tables identical).

diesel::table! {
    players (id) {
        id -> Text,
        username -> Text,
        username_key -> Text,
        password_hash -> Text,
        role -> Text,
        created_at -> BigInt,
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
