//! Agents-SDK sessions over recall memory (docs/api.md "Sessions"): a session is a thread, an
//! item a message (crates/memory_core/src/session.rs maps one to the other). Adding goes through
//! message_append's code, so items are counted, embedded and searchable like any message.

use crate::error::raise;
use crate::ops::idempotency;
use crate::ops::recall::{self, Message};
use crate::pg::json::{Json, JsonText};
use crate::pg::{spi, tenant};
use memory_core::request::Idempotency;
use memory_core::session;
use memory_core::SqlState;
use serde_json::Value;

/// session_add_items: every item checked first (one that is not a JSON object: 22023 naming
/// it, nothing added), then appended in order; how many. A tool output is filed under the name
/// of the tool whose call it answers (among these items, or earlier in the session).
pub fn add(
    session_id: &str,
    items: &[Value],
    user_id: Option<&str>,
    key: Option<&Idempotency>,
) -> i64 {
    tenant::scoped(user_id, |user| {
        idempotency::once(user, "session_add_items", key, || {
            add_for(user, session_id, items)
        })
        .as_i64()
        .unwrap_or(0)
    })
}

fn add_for(user: &str, session_id: &str, items: &[Value]) -> Value {
    {
        let mut stored: Vec<session::Stored> = items
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
        for (i, s) in stored.iter_mut().enumerate() {
            if s.role == "tool" && s.name.is_none() {
                if let Some(call) = &s.tool_call_id {
                    s.name = session::tool_name(&items[..i], call)
                        .map(str::to_string)
                        .or_else(|| earlier_tool_name(user, session_id, call));
                }
            }
        }
        // One embedding batch for all the items (the model's cost is per batch as much as per text).
        recall::append_all(
            items
                .iter()
                .zip(&stored)
                .map(|(it, s)| Message {
                    thread: session_id,
                    role: s.role,
                    content: &s.content,
                    user_id: Some(user),
                    tool_calls: s.tool_calls.clone().map(Json),
                    tool_calls_text: s.tool_calls.as_ref().map(Value::to_string),
                    tool_call_id: s.tool_call_id.as_deref(),
                    name: s.name.as_deref(),
                    item: Some(Json(it.clone())),
                    created_at: None,
                    metadata: None,
                })
                .collect(),
        );
        Value::from(items.len())
    }
}

/// The tool name of an earlier call `call_id` in the session (a function call item, or a
/// message's tool_calls).
fn earlier_tool_name(user: &str, session_id: &str, call_id: &str) -> Option<String> {
    spi::one_opt::<String>(
        include_str!("../../sql/queries/session_tool_name.sql"),
        &[user.into(), session_id.into(), call_id.into()],
        "finding the tool a call named",
    )
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
        // A read by key on a session's hot path (every turn of an Agents SDK run reads the
        // session): one generic plan per backend instead of planning at each call.
        spi::rows_generic(sql, &args, "reading a session", read)
    }
}

/// session_get_items: the session's items as the model should see them, oldest first: the
/// summary compact_thread wrote (as a system item) in place of what it folded, then the items
/// still in context; the latest `limit` of them when given.
pub fn get(session_id: &str, limit: Option<i64>, user_id: Option<&str>) -> Vec<Value> {
    tenant::scoped(user_id, |user| {
        rows(
            include_str!("../../sql/queries/session_items.sql"),
            session_id,
            user,
            limit,
            false,
        )
        .into_iter()
        .map(to_item)
        .collect()
    })
}

/// session_pop_item: removes the newest item and returns it (NULL when there is none).
pub fn pop(session_id: &str, user_id: Option<&str>) -> Option<Value> {
    tenant::scoped(user_id, |user| {
        rows(
            include_str!("../../sql/queries/session_pop.sql"),
            session_id,
            user,
            None,
            true,
        )
        .pop()
        .map(to_item)
    })
}

/// session_clear: removes every item (the thread stays); how many.
pub fn clear(session_id: &str, user_id: Option<&str>) -> i64 {
    tenant::scoped(user_id, |user| {
        spi::one_opt::<i64>(
            "WITH d AS (DELETE FROM memory.messages WHERE user_id = $1 AND thread_id = $2 RETURNING 1) SELECT count(*) FROM d",
            &[user.into(), session_id.into()],
            "clearing a session",
        )
        .unwrap_or(0)
    })
}
