//! Opaque, URL-safe identifiers and secrets.

use rand::RngExt;

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Room codes avoid characters people confuse when reading them aloud (0/O, 1/I/L).
const ROOM_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

fn random_string(alphabet: &[u8], len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

/// A new player id (16 base-62 characters, about 95 bits).
pub fn player_id() -> String {
    random_string(ALPHABET, 16)
}

/// A new match id: short, because it is the match link (10 base-62 characters, about 59 bits).
pub fn match_id() -> String {
    random_string(ALPHABET, 10)
}

/// A new generic record id (refresh tokens, tickets, families).
pub fn record_id() -> String {
    random_string(ALPHABET, 20)
}

/// A new six-character room code.
pub fn room_code() -> String {
    random_string(ROOM_ALPHABET, 6)
}

/// Whether `code` has the shape of a room code (case-insensitive).
pub fn is_room_code(code: &str) -> bool {
    code.len() == 6
        && code
            .bytes()
            .all(|b| ROOM_ALPHABET.contains(&b.to_ascii_uppercase()))
}

/// A new secret of `bytes` random bytes, base64url encoded without padding.
pub fn secret(bytes: usize) -> String {
    use base64::Engine;
    let mut buf = vec![0u8; bytes];
    rand::rng().fill(&mut buf[..]);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_url_safe_and_of_fixed_length() {
        for id in [player_id(), match_id(), record_id()] {
            assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
        }
        assert_eq!(match_id().len(), 10);
        assert_ne!(player_id(), player_id());
    }

    #[test]
    fn room_codes_have_six_unambiguous_characters() {
        let code = room_code();
        assert!(is_room_code(&code), "{code}");
        assert!(is_room_code(&code.to_lowercase()));
        assert!(!code.contains(['0', 'O', '1', 'I']));
        assert!(!is_room_code("ABC12"));
        assert!(!is_room_code("ABCDE0"));
    }
}
