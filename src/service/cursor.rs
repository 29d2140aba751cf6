//! Opaque pagination cursors: the keyset of the last row of a page, base64url
//! encoded so clients treat it as a token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Encodes keyset parts (which must not contain newlines) as a cursor.
pub fn encode(parts: &[&str]) -> String {
    URL_SAFE_NO_PAD.encode(parts.join("\n"))
}

/// Decodes a cursor of exactly `n` parts; `None` for anything else.
pub fn decode(cursor: &str, n: usize) -> Option<Vec<String>> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let parts: Vec<String> = text.split('\n').map(str::to_owned).collect();
    (parts.len() == n).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_other_shapes() {
        let c = encode(&["1796000000000", "abc"]);
        assert_eq!(
            decode(&c, 2),
            Some(vec!["1796000000000".to_owned(), "abc".to_owned()])
        );
        assert_eq!(decode(&c, 3), None);
        assert_eq!(decode("%%%", 2), None);
        assert_eq!(decode("", 2), None);
    }
}
