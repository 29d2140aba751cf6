//! One page of a list (API.md: `{"items": [...], "next_cursor": "…" | null}`).

use serde::Serialize;
use utoipa::ToSchema;

/// One page of a list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}
