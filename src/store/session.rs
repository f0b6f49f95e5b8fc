//! Agents-SDK sessions over recall memory (docs/api.md "Sessions"): a session is a thread, an
//! item a message (crates/memory_core/src/session.rs maps one to the other). Adding goes through
//! message_append's code, so items are counted, embedded and searchable like any message.

use crate::error::raise;
use crate::pg::json::{Json, JsonText};
use crate::pg::lookup::{self, Owned};
use crate::pg::spi;
use crate::store::recall::{self, Message};
use memory_core::session;
use memory_core::SqlState;
use serde_json::Value;

/// session_add_items: every item checked first (one bad item: 22023 naming it, nothing added),
/// then appended in order; how many.
pub fn add(session_id: &str, items: &[Value], user_id: Option<&str>) -> i64 {
    let stored: Vec<session::Stored> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            session::stored(it).unwrap_or_else(|e| {
                raise(
                    SqlState::InvalidParameterValue,
                    format!("items[{i}]: {e}"),
                    None,
                )
            })
        })
        .collect();
    // One embedding batch for all the items (the model's cost is per batch as much as per text).
    recall::append_all(
        items
            .iter()
            .zip(&stored)
            .map(|(it, s)| Message {
                thread: session_id,
                role: s.role,
                content: &s.content,
                user_id,
                tool_calls: s.tool_calls.clone().map(Json),
                tool_calls_text: s.tool_calls.as_ref().map(Value::to_string),
                tool_call_id: s.tool_call_id.as_deref(),
                name: s.name.as_deref(),
                item: Some(Json(it.clone())),
            })
            .collect(),
    );
    items.len() as i64
}

type Row = (String, String, Option<Json>, Option<String>, Option<Json>);

fn to_item(r: Row) -> Value {
    let (role, content, tool_calls, tool_call_id, item) = r;
    session::item(
        item.map(|j| j.0),
        &role,
        &content,
        tool_calls.as_ref().map(|j| &j.0),
        tool_call_id.as_deref(),
    )
}

fn read(r: &pgrx::spi::SpiHeapTupleData<'_>) -> Result<Row, pgrx::spi::Error> {
    Ok((
        r.get::<String>(1)?.unwrap_or_default(),
        r.get::<String>(2)?.unwrap_or_default(),
        r.get::<JsonText>(3)?.map(|j| Json(j.value())),
        r.get::<String>(4)?,
        r.get::<JsonText>(5)?.map(|j| Json(j.value())),
    ))
}

/// Runs a session statement; `write` for one that changes rows (SPI's read-only mode refuses a
/// DELETE otherwise).
fn rows(sql: &str, session_id: &str, user: &str, limit: Option<i64>, write: bool) -> Vec<Row> {
    let args = [user.into(), session_id.into(), limit.into()];
    if write {
        spi::rows_mut(sql, &args, "changing a session", read)
    } else {
        spi::rows(sql, &args, "reading a session", read)
    }
}

/// session_get_items: the session's items oldest first, the latest `limit` of them when given;
/// an empty list for a session that does not exist yet.
pub fn get(session_id: &str, limit: Option<i64>) -> Vec<Value> {
    let Some(user) = lookup::find_owner(Owned::Thread, session_id) else {
        return vec![];
    };
    rows(
        include_str!("../../sql/queries/session_items.sql"),
        session_id,
        &user,
        limit,
        false,
    )
    .into_iter()
    .map(to_item)
    .collect()
}

/// session_pop_item: removes the newest item and returns it (NULL when there is none).
pub fn pop(session_id: &str) -> Option<Value> {
    let user = lookup::find_owner(Owned::Thread, session_id)?;
    rows(
        include_str!("../../sql/queries/session_pop.sql"),
        session_id,
        &user,
        None,
        true,
    )
    .pop()
    .map(to_item)
}

/// session_clear: removes every item (the thread stays); how many.
pub fn clear(session_id: &str) -> i64 {
    let Some(user) = lookup::find_owner(Owned::Thread, session_id) else {
        return 0;
    };
    spi::one_opt::<i64>(
        "WITH d AS (DELETE FROM memory.messages WHERE user_id = $1 AND thread_id = $2 RETURNING 1) SELECT count(*) FROM d",
        &[user.as_str().into(), session_id.into()],
        "clearing a session",
    )
    .unwrap_or(0)
}
