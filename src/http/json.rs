//! The JSON body extractor: at most 16 KiB, syntax errors are 400
//! `malformed_json`, shape and type errors 422 `validation_failed` naming the
//! field (by its path into the body), and so is text holding U+0000, which
//! PostgreSQL cannot store.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::BytesMut;
use actix_web::{FromRequest, HttpRequest};
use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;

use super::problem::Problem;
use crate::service::FieldError;

/// Largest accepted request body.
pub const BODY_LIMIT: usize = 16 * 1024;

/// A request body parsed as JSON into `T`.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for JsonBody<T> {
    type Error = Problem;
    type Future = LocalBoxFuture<'static, Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let mut payload = payload.take();
        Box::pin(async move {
            if declared.is_some_and(|n| n > BODY_LIMIT) {
                return Err(Problem::payload_too_large(BODY_LIMIT));
            }
            let mut body = BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| {
                    Problem::malformed_json(format!("the request body could not be read: {e}"))
                })?;
                if body.len() + chunk.len() > BODY_LIMIT {
                    return Err(Problem::payload_too_large(BODY_LIMIT));
                }
                body.extend_from_slice(&chunk);
            }
            parse(&body).map(JsonBody)
        })
    }
}

/// A request body that may be empty (`None`) or JSON for `T`.
#[derive(Debug)]
pub struct OptionalJsonBody<T>(pub Option<T>);

impl<T: DeserializeOwned + 'static> FromRequest for OptionalJsonBody<T> {
    type Error = Problem;
    type Future = LocalBoxFuture<'static, Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_limited(req, payload);
        Box::pin(async move {
            let body = body.await?;
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(OptionalJsonBody(None));
            }
            parse(&body).map(|v| OptionalJsonBody(Some(v)))
        })
    }
}

/// Reads the whole body, refusing more than [`BODY_LIMIT`] bytes.
fn read_limited(
    req: &HttpRequest,
    payload: &mut Payload,
) -> LocalBoxFuture<'static, Result<BytesMut, Problem>> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let mut payload = payload.take();
    Box::pin(async move {
        if declared.is_some_and(|n| n > BODY_LIMIT) {
            return Err(Problem::payload_too_large(BODY_LIMIT));
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| {
                Problem::malformed_json(format!("the request body could not be read: {e}"))
            })?;
            if body.len() + chunk.len() > BODY_LIMIT {
                return Err(Problem::payload_too_large(BODY_LIMIT));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    })
}

/// Parses a JSON body into `T`.
///
/// # Errors
/// 400 for bytes that are not JSON, 422 for JSON of the wrong shape.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Problem::malformed_json(
            "the request body is empty; a JSON object is expected",
        ));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| Problem::malformed_json(format!("the request body is not valid JSON: {e}")))?;
    // serde would also read a struct from an array of its fields in order;
    // every body of the API is an object, so anything else is refused.
    if !value.is_object() {
        return Err(Problem::validation(&[FieldError::new(
            "body",
            "must be a JSON object",
        )]));
    }
    if let Some(field) = nul_at(&value, "") {
        return Err(Problem::validation(&[FieldError::new(field, NUL_MESSAGE)]));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        Problem::validation(&[field_error(&path, &message)])
    })
}

/// Why text holding U+0000 is refused (in a body, and in a request's target:
/// `middleware::nul_refusal`).
pub(super) const NUL_MESSAGE: &str = "must not contain the NUL character (U+0000)";

/// The path (as serde names fields: `a.b`, `a[0]`) of the first string or
/// key in `value` that holds U+0000, below `at`. JSON can carry it
/// (`"\u0000"`) and SQLite stores it, but PostgreSQL refuses it in text: such
/// a name or code would fail there as a database error, not as bad input.
fn nul_at(value: &serde_json::Value, at: &str) -> Option<String> {
    let below = |name: &str| {
        if at.is_empty() {
            name.to_owned()
        } else {
            format!("{at}.{name}")
        }
    };
    match value {
        serde_json::Value::String(s) if s.contains('\0') => Some(if at.is_empty() {
            "body".into()
        } else {
            at.into()
        }),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_at(item, &format!("{at}[{i}]"))),
        serde_json::Value::Object(fields) => fields.iter().find_map(|(name, field)| {
            if name.contains('\0') {
                Some(below(&name.replace('\0', "\\u0000")))
            } else {
                nul_at(field, &below(name))
            }
        }),
        _ => None,
    }
}

/// Names the field of a serde error: serde reports a missing field at its
/// parent's path, with the name only inside the message.
fn field_error(path: &str, message: &str) -> FieldError {
    let parent = if path == "." { "" } else { path };
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        let field = if parent.is_empty() {
            name.to_owned()
        } else {
            format!("{parent}.{name}")
        };
        return FieldError::new(field, "is required");
    }
    let field = if parent.is_empty() {
        "body".to_owned()
    } else {
        parent.to_owned()
    };
    // serde's message ends with the position in the text we re-serialised; drop it.
    let message = message.split(" at line ").next().unwrap_or(message);
    FieldError::new(field, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[expect(dead_code)]
    struct Body {
        name: String,
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[expect(dead_code)]
    struct Inner {
        n: u8,
    }

    #[test]
    fn syntax_errors_are_malformed_json() {
        assert_eq!(parse::<Body>(b"").unwrap_err().code(), "malformed_json");
        assert_eq!(
            parse::<Body>(b"{\"name\": ").unwrap_err().code(),
            "malformed_json"
        );
    }

    #[test]
    fn shape_errors_name_the_field() {
        let p = parse::<Body>(br#"{"name": 5, "inner": {"n": 1}}"#).unwrap_err();
        assert_eq!(p.code(), "validation_failed");
        assert!(p.to_string().contains("name: invalid type"), "{p}");
        let p = parse::<Body>(br#"{"name": "x", "inner": {}}"#).unwrap_err();
        assert!(p.to_string().contains("inner.n: is required"), "{p}");
        let p = parse::<Body>(br#"{"name": "x", "inner": {"n": 300}}"#).unwrap_err();
        assert!(p.to_string().contains("inner.n:"), "{p}");
        let p = parse::<Body>(b"\"text\"").unwrap_err();
        assert!(p.to_string().contains("body:"), "{p}");
    }

    #[test]
    fn text_holding_nul_is_refused_by_its_field() {
        for (body, field) in [
            (&br#"{"name": "a\u0000b", "inner": {"n": 1}}"#[..], "name"),
            (
                br#"{"name": "x", "inner": {"n": 1, "tags": ["ok", "\u0000"]}}"#,
                "inner.tags[1]",
            ),
            (
                br#"{"name": "x", "inner": {"n": 1}, "k\u0000": 1}"#,
                "k\\u0000",
            ),
        ] {
            let p = parse::<Body>(body).unwrap_err();
            assert_eq!(p.code(), "validation_failed");
            assert!(
                p.to_string().contains(&format!("{field}: {NUL_MESSAGE}")),
                "{p}"
            );
        }
        // An escaped backslash before `u0000` is text, not U+0000.
        parse::<Body>(br#"{"name": "a\\u0000b", "inner": {"n": 1}}"#).unwrap();
    }

    #[test]
    fn a_struct_is_not_read_from_an_array_of_its_fields() {
        let p = parse::<Body>(br#"["x", {"n": 1}]"#).unwrap_err();
        assert_eq!(p.code(), "validation_failed");
        assert!(p.to_string().contains("body: must be a JSON object"), "{p}");
    }
}
