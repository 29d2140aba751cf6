//! Query strings, parsed leniently so that a bad value is a 422
//! `validation_failed` naming the parameter (actix's own extractor answers a
//! bare 400), and the pagination parameters every list shares.

use std::collections::HashMap;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::{Ready, ready};
use serde::Deserialize;
use utoipa::IntoParams;

use super::problem::Problem;
use crate::service::FieldError;

/// Default page size.
pub const DEFAULT_LIMIT: u32 = 20;
/// Largest page size.
pub const MAX_LIMIT: u32 = 100;

/// The pagination parameters, as documented.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Pagination {
    /// Page size, 1..=100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// The query string as name → value (the last value of a repeated name wins).
#[derive(Debug, Default)]
pub struct QueryParams(HashMap<String, String>);

impl FromRequest for QueryParams {
    type Error = Problem;
    type Future = Ready<Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(req.query_string()).unwrap_or_default();
        ready(Ok(QueryParams(pairs.into_iter().collect())))
    }
}

/// Pagination read from a query.
#[derive(Debug)]
pub struct PageRequest {
    /// Page size.
    pub limit: u32,
    raw_cursor: Option<String>,
}

impl PageRequest {
    /// Decodes the cursor with `decode`, recording an error when it is not one.
    pub fn cursor<T>(
        &self,
        decode: impl Fn(&str) -> Option<T>,
        errors: &mut Vec<FieldError>,
    ) -> Option<T> {
        let raw = self.raw_cursor.as_deref()?;
        let decoded = decode(raw);
        if decoded.is_none() {
            errors.push(FieldError::new(
                "cursor",
                "is not a cursor this list gave out",
            ));
        }
        decoded
    }
}

impl QueryParams {
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// `limit` and `cursor`, recording errors for bad values.
    pub fn pagination(&self, errors: &mut Vec<FieldError>) -> PageRequest {
        let limit = match self.get("limit") {
            None => DEFAULT_LIMIT,
            Some(text) => match text.parse::<u32>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    errors.push(FieldError::new(
                        "limit",
                        "must be a whole number from 1 to 100",
                    ));
                    DEFAULT_LIMIT
                }
            },
        };
        PageRequest {
            limit,
            raw_cursor: self.get("cursor").map(str::to_owned),
        }
    }
}
