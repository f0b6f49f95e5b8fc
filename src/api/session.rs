//! Agents-SDK sessions over recall memory (docs/api.md "Sessions"): the four calls of the
//! OpenAI Agents SDK's `Session` protocol, on a thread. The work is in src/ops/session.rs.

use crate::error::{raise, OrRaise};
use crate::ops::session as ops;
use crate::pg::json::Json;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// `get_items(limit)`: the session's items oldest first (the latest `limit` when given; 0:
/// none; negative or NULL: all), as they were added, a compaction summary standing for what it
/// folded; `[]` for a new session. `user_id` names the tenant when none is set.
#[pg_extern(stable, parallel_safe)]
fn session_get_items(
    session_id: Option<&str>,
    limit: default!(Option<i32>, "NULL"),
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let id = validate::id("session_id", session_id).or_raise();
    // As the SDK's SQLiteSession: a negative limit is no limit.
    let limit = limit.filter(|l| *l >= 0).map(i64::from);
    if limit == Some(0) {
        return JsonB(Value::Array(vec![]));
    }
    JsonB(Value::Array(ops::get(id, limit, user_id)))
}

/// `add_items(items)`: appends the items (a JSON array of Responses-API items, or any JSON
/// objects) as messages of the session's thread, all or none; how many. `user_id` names the
/// tenant when none is set (and starts a new session).
#[pg_extern(volatile, parallel_unsafe)]
fn session_add_items(
    session_id: Option<&str>,
    items: Option<Json>,
    user_id: default!(Option<&str>, "NULL"),
    idempotency_key: default!(Option<&str>, "NULL"),
) -> i64 {
    let key = crate::ops::idempotency::of_call("session_add_items", idempotency_key, || {
        vec![
            ("session_id", serde_json::json!(session_id)),
            ("items", items.as_ref().map_or(Value::Null, |j| j.0.clone())),
            ("user_id", serde_json::json!(user_id)),
        ]
    });
    let id = validate::id("session_id", session_id).or_raise();
    let items = match items {
        Some(Json(Value::Array(a))) => a,
        _ => raise(
            SqlState::InvalidParameterValue,
            "items must be a JSON array of items",
            Some("e.g. '[{\"role\": \"user\", \"content\": \"Hi\"}]'".into()),
        ),
    };
    ops::add(id, &items, user_id, key.as_ref())
}

/// `pop_item()`: removes the newest item and returns it; NULL when the session is empty.
#[pg_extern(volatile, parallel_unsafe)]
fn session_pop_item(
    session_id: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
) -> Option<JsonB> {
    let id = validate::id("session_id", session_id).or_raise();
    ops::pop(id, user_id).map(JsonB)
}

/// `clear_session()`: removes every item of the session; how many.
#[pg_extern(volatile, parallel_unsafe)]
fn session_clear(session_id: Option<&str>, user_id: default!(Option<&str>, "NULL")) -> i64 {
    let id = validate::id("session_id", session_id).or_raise();
    ops::clear(id, user_id)
}
