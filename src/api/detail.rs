//! Layer-2 detail memory (docs/api.md "Detail memory, files, checkpoints"; docs/design.md
//! "Detail memory"): `memory_ref_store`, `memory_ref_get`, `memory_capture`. The work is in
//! src/ops/detail.rs.

use crate::error::{raise, OrRaise};
use crate::ops::detail as ops;
use crate::pg::json::Json;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// Largest page memory_ref_get returns, in characters.
const MAX_PAGE_CHARS: i64 = 1_000_000;

fn object(arg: &str, v: Option<Json>) -> Value {
    match v {
        None => json!({}),
        Some(Json(o @ Value::Object(_))) => o,
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            format!("{arg} must be a JSON object"),
            None,
        ),
    }
}

fn detail_type(v: Option<&str>) -> &str {
    let t = validate::required("type", v).or_raise();
    if !memory_core::detail::valid_type(t) {
        raise(
            SqlState::InvalidParameterValue,
            format!("invalid type \"{}\"", t.chars().take(60).collect::<String>()),
            Some("a type is 1-50 letters, digits, '_', '.' or '-', e.g. command_output, file_content".into()),
        );
    }
    t
}

/// `memory_ref_store(content, description, type, user_id, thread_id, metadata, agent_id)` (sql/detail.sql
/// names the arguments: `type` cannot be a Rust argument name): stores detail content and
/// returns `{key, placeholder, id}` (`id`: its Layer-1 memory).
#[pg_extern(volatile, parallel_unsafe, schema = "memory")]
fn ref_store(
    content: Option<&str>,
    description: Option<&str>,
    kind: Option<&str>,
    user_id: Option<&str>,
    thread_id: Option<&str>,
    metadata: Option<Json>,
    agent_id: Option<&str>,
) -> JsonB {
    let content = crate::pg::limits::text("content", content);
    let description = crate::pg::limits::text("description", description);
    let kind = detail_type(kind);
    let thread = validate::optional_id("thread_id", thread_id).or_raise();
    let metadata = object("metadata", metadata);
    let agent = validate::optional_id("agent_id", agent_id).or_raise();
    JsonB(ops::ref_store(
        user_id,
        content,
        description,
        kind,
        thread,
        agent,
        metadata,
    ))
}

/// A page of a detail's content: `{content, offset, next_offset, total}` in characters;
/// `next_offset` is NULL on the last page. P0002 for an unknown (or forgotten) key.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_ref_get(
    key: Option<&str>,
    offset: default!(Option<i32>, 0),
    limit: default!(Option<i32>, 4000),
) -> JsonB {
    let key = validate::id("key", key).or_raise();
    let offset = *validate::required("offset", offset.as_ref()).or_raise() as i64;
    let offset = validate::range("offset", offset, 0, i32::MAX as i64).or_raise();
    let limit = *validate::required("limit", limit.as_ref()).or_raise() as i64;
    let limit = validate::range("limit", limit, 1, MAX_PAGE_CHARS).or_raise();
    JsonB(ops::get(key, offset, limit))
}

/// The capture step (docs/design.md "Detail memory"): the output itself when it has at most
/// `threshold_tokens` tokens, else the output goes to detail memory and the answer is one line
/// with its placeholder, status and key lines.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_capture(
    command: Option<&str>,
    output: Option<&str>,
    threshold_tokens: default!(Option<i32>, 500),
    user_id: default!(Option<&str>, "NULL"),
    thread_id: default!(Option<&str>, "NULL"),
    agent_id: default!(Option<&str>, "NULL"),
) -> String {
    let command = crate::pg::limits::text("command", command);
    if command.trim().is_empty() {
        raise(
            SqlState::InvalidParameterValue,
            "command must not be empty",
            None,
        );
    }
    let output = crate::pg::limits::text("output", output);
    let threshold = *validate::required("threshold_tokens", threshold_tokens.as_ref()).or_raise();
    let threshold =
        validate::range("threshold_tokens", threshold as i64, 0, 1_000_000).or_raise() as usize;
    let thread = validate::optional_id("thread_id", thread_id).or_raise();
    let agent = validate::optional_id("agent_id", agent_id).or_raise();
    ops::capture(user_id, command, output, threshold, thread, agent)
}

/// Stored details whose description matches `query` (the tool `search_memory`), best
/// first, narrowed to a thread and an agent when given: `(key, description, type, thread,
/// agent, chars, created_at, score)` (`thread` and `agent`: a result column cannot share an
/// argument's name). The content itself is not searched; `memory_ref_get` opens it by key.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::type_complexity)]
fn memory_ref_search(
    query: Option<&str>,
    thread_id: default!(Option<&str>, "NULL"),
    agent_id: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 5),
    user_id: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(key, String),
        name!(description, String),
        name!(type, String),
        name!(thread, Option<String>),
        name!(agent, Option<String>),
        name!(chars, i64),
        name!(created_at, TimestampWithTimeZone),
        name!(score, f64),
    ),
> {
    let query = crate::pg::limits::text("query", query);
    crate::pg::limits::query("query", query);
    let thread = validate::optional_id("thread_id", thread_id).or_raise();
    let agent = validate::optional_id("agent_id", agent_id).or_raise();
    let limit = *validate::required("limit", limit.as_ref()).or_raise() as i64;
    let limit = validate::range("limit", limit, 1, 100).or_raise() as usize;
    TableIterator::new(ops::search(user_id, query, thread, agent, limit))
}
