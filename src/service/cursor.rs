//! Opaque pagination cursors: the keyset of the last row of a page, base64url
//! encoded so clients treat it as a token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Encodes keyset parts (which must not contain newlines) as a cursor.
pub fn encode(parts: &[&str]) -> String {
    URL_SAFE_NO_PAD.encode(parts.join("\n"))
}

/// The text of a cursor: base64url of UTF-8 without U+0000 (no cursor
/// handed out holds it, and PostgreSQL refuses it in a query's text).
fn text_of(cursor: &str) -> Option<String> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    (!text.contains('\0')).then_some(text)
}

/// Decodes a cursor of exactly `n` parts; `None` for anything else.
pub fn decode(cursor: &str, n: usize) -> Option<Vec<String>> {
    let text = text_of(cursor)?;
    let parts: Vec<String> = text.split('\n').map(str::to_owned).collect();
    (parts.len() == n).then_some(parts)
}

/// The cursor of a keyset `(created_at, id)`: match lists walk newest first by it.
pub fn encode_keyset(created_at: i64, id: &str) -> String {
    encode(&[&created_at.to_string(), id])
}

/// Decodes a cursor made by [`encode_keyset`]. Cursors handed out before
/// there was one codec (`created_at:id`) still decode, so a client holding
/// one mid-list loses nothing.
pub fn decode_keyset(cursor: &str) -> Option<(i64, String)> {
    let (at, id) = match decode(cursor, 2) {
        Some(mut parts) => {
            let id = parts.pop()?;
            (parts.pop()?, id)
        }
        None => {
            let text = text_of(cursor)?;
            let (at, id) = text.split_once(':')?;
            (at.to_owned(), id.to_owned())
        }
    };
    Some((at.parse().ok()?, id))
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
        // "0\n\0" and "0:\0": U+0000 in an id.
        assert_eq!(decode("MAoA", 2), None);
        assert_eq!(decode_keyset("MAoA"), None);
        assert_eq!(decode_keyset("MDoA"), None);
    }

    #[test]
    fn keysets_round_trip_and_the_colon_form_handed_out_before_still_decodes() {
        let c = encode_keyset(1_796_000_000_000, "abcDEF1234");
        assert_eq!(
            decode_keyset(&c),
            Some((1_796_000_000_000, "abcDEF1234".to_owned()))
        );
        let legacy = URL_SAFE_NO_PAD.encode("1796000000000:abcDEF1234");
        assert_eq!(
            decode_keyset(&legacy),
            Some((1_796_000_000_000, "abcDEF1234".to_owned()))
        );
        assert_eq!(decode_keyset(&encode(&["soon", "abc"])), None);
        assert_eq!(decode_keyset("%%%"), None);
    }
}
