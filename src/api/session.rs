//! Agents-SDK sessions over recall memory (docs/api.md "Sessions"): the four calls of the
//! OpenAI Agents SDK's `Session` protocol, on a thread. The work is in src/store/session.rs.

use crate::error::{raise, OrRaise};
use crate::pg::json::Json;
use crate::store::session as store;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// `get_items(limit)`: the session's items oldest first (the latest `limit` when given), as
/// they were added; `[]` for a new session.
#[pg_extern(stable, parallel_safe)]
fn session_get_items(session_id: Option<&str>, limit: default!(Option<i32>, "NULL")) -> JsonB {
    let id = validate::id("session_id", session_id).or_raise();
    let limit = limit.map(|l| validate::range("limit", i64::from(l), 1, 1_000_000).or_raise());
    JsonB(Value::Array(store::get(id, limit)))
}

/// `add_items(items)`: appends the items (a JSON array of Responses-API items) as messages of
/// the session's thread, all or none; how many. `user_id` starts a new session.
#[pg_extern(volatile, parallel_unsafe)]
fn session_add_items(
    session_id: Option<&str>,
    items: Option<Json>,
    user_id: default!(Option<&str>, "NULL"),
) -> i64 {
    let id = validate::id("session_id", session_id).or_raise();
    let items = match items {
        Some(Json(Value::Array(a))) => a,
        _ => raise(
            SqlState::InvalidParameterValue,
            "items must be a JSON array of items",
            Some("e.g. '[{\"role\": \"user\", \"content\": \"Hi\"}]'".into()),
        ),
    };
    store::add(id, &items, user_id)
}

/// `pop_item()`: removes the newest item and returns it; NULL when the session is empty.
#[pg_extern(volatile, parallel_unsafe)]
fn session_pop_item(session_id: Option<&str>) -> Option<JsonB> {
    let id = validate::id("session_id", session_id).or_raise();
    store::pop(id).map(JsonB)
}

/// `clear_session()`: removes every item of the session; how many.
#[pg_extern(volatile, parallel_unsafe)]
fn session_clear(session_id: Option<&str>) -> i64 {
    let id = validate::id("session_id", session_id).or_raise();
    store::clear(id)
}
