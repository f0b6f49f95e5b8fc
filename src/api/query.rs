//! memory_query, the single retrieval tool (docs/api.md, docs/design.md "One query tool"), and
//! the functions built on the same ranking: memory_search, memory_delta, memory_context and
//! memory.query_plan. The work is in src/ops/query.rs.

use crate::error::OrRaise;
use crate::ops::{delta, query};
use crate::pg::json::Json;
use memory_core::request;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// The single retrieval tool (docs/design.md "One query tool").
#[pg_extern(volatile, parallel_unsafe)]
fn memory_query(request: Option<Json>) -> JsonB {
    let Json(v) = validate::required("request", request.as_ref()).or_raise();
    let q = request::parse_query(v).or_raise();
    crate::pg::limits::query("query", &q.query);
    JsonB(query::run_query(&q))
}

/// `memory_query` for the tenant `user_id`: the form Citus runs wholly on that tenant's worker
/// (docs/citus.md "One round trip"). Strict: a NULL argument returns NULL.
#[pg_extern(volatile, parallel_unsafe, strict)]
fn memory_query_for(user_id: &str, request: Json) -> JsonB {
    crate::pg::citus::routed(user_id, || memory_query(Some(request)))
}

/// The plans of the two statements memory_query runs for `request` (EXPLAIN, text format; with
/// `measure`, EXPLAIN ANALYZE: it runs them): the seeds as planned for this call, then the pool
/// statement's generic plan, as memory_query keeps it. For DBAs, and for the tests that prove
/// the indexes are used.
#[pg_extern(volatile, parallel_unsafe, schema = "memory")]
fn query_plan(request: Option<Json>, measure: default!(Option<bool>, false)) -> String {
    let Json(v) = validate::required("request", request.as_ref()).or_raise();
    let q = request::parse_query(v).or_raise();
    query::plan(&q, measure.unwrap_or(false))
}

/// The same ranking for SQL users.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::type_complexity)]
fn memory_search(
    query: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
    top_k: default!(Option<i32>, 5),
    filters: default!(Option<Json>, "'{}'"),
) -> TableIterator<
    'static,
    (
        name!(id, pgrx::Uuid),
        name!(kind, String),
        name!(category, Option<String>),
        name!(text, String),
        name!(score, f64),
        name!(importance, i16),
        name!(updated_at, TimestampWithTimeZone),
        name!(happened_at, TimestampWithTimeZone),
    ),
> {
    let text = validate::required("query", query).or_raise();
    crate::pg::limits::query("query", text);
    let top_k = *validate::required("top_k", top_k.as_ref()).or_raise();
    let top_k = validate::range("top_k", top_k as i64, 1, request::MAX_TOP_K).or_raise() as usize;
    let mut filters = filters.map(|j| j.0).unwrap_or_else(|| json!({}));
    if !filters.is_object() {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            "invalid \"filters\": must be a JSON object",
            Some("e.g. '{\"kind\": \"semantic\"}'".into()),
        );
    }
    // memory_query's top-level "as_of", "include_superseded" and "kinds" ride in memory_search's
    // filters.
    let mut req = json!({});
    if let Some(o) = filters.as_object_mut() {
        for key in ["as_of", "include_superseded", "kinds"] {
            if let Some(v) = o.remove(key) {
                req[key] = v;
            }
        }
    }
    req["filters"] = filters;
    if let Some(u) = user_id {
        req["filters"]["user_id"] = json!(u);
    }
    let q = request::parse_query(&req).or_raise();
    TableIterator::new(query::ranked(&q, text, top_k).into_iter().map(|r| {
        (
            r.id,
            r.kind,
            r.category,
            r.text,
            r.score,
            r.importance,
            r.updated_at,
            r.happened_at,
        )
    }))
}

/// The delta header alone (empty string when nothing changed).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_delta(thread_id: Option<&str>, since_rev: Option<i64>) -> String {
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let since = *validate::required("since_rev", since_rev.as_ref()).or_raise();
    validate::range("since_rev", since, 0, i64::MAX).or_raise();
    delta::for_thread(thread_id, since)
}

/// The memory section of a prompt, in one call (read-before-think, docs/design.md "Episodes";
/// its read-before-think step): compiled core blocks, the delta header, and a `[MEMORY CONTEXT]` block of
/// the best `memories` memories and `files` memory files (three of each by default), with the
/// `summaries` named (docs/api.md "Summaries") after the blocks, within
/// `budget_tokens` (src/ops/query.rs).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_context(
    agent_id: Option<&str>,
    thread_id: Option<&str>,
    query: Option<&str>,
    budget_tokens: default!(Option<i32>, 2048),
    memories: default!(Option<i32>, 3),
    files: default!(Option<i32>, 3),
    summaries: default!(Option<Vec<Option<String>>>, "NULL"),
) -> String {
    context_call(
        agent_id,
        thread_id,
        query,
        budget_tokens,
        memories,
        files,
        summaries.unwrap_or_default(),
    )
}

/// `memory_context` for the tenant `user_id`: the form Citus runs wholly on that tenant's
/// worker (docs/citus.md "One round trip"). Strict: a NULL argument returns NULL.
#[pg_extern(volatile, parallel_unsafe, strict)]
#[allow(clippy::too_many_arguments)]
fn memory_context_for(
    user_id: &str,
    agent_id: &str,
    thread_id: &str,
    query: &str,
    budget_tokens: default!(i32, 2048),
    memories: default!(i32, 3),
    files: default!(i32, 3),
    summaries: default!(Vec<Option<String>>, "ARRAY[]::text[]"),
) -> String {
    crate::pg::citus::routed(user_id, || {
        context_call(
            Some(agent_id),
            Some(thread_id),
            Some(query),
            Some(budget_tokens),
            Some(memories),
            Some(files),
            summaries,
        )
    })
}

/// memory_context's arguments checked, and the context built.
fn context_call(
    agent_id: Option<&str>,
    thread_id: Option<&str>,
    query: Option<&str>,
    budget_tokens: Option<i32>,
    memories: Option<i32>,
    files: Option<i32>,
    summaries: Vec<Option<String>>,
) -> String {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let text = validate::required("query", query).or_raise();
    let budget = *validate::required("budget_tokens", budget_tokens.as_ref()).or_raise();
    let budget =
        validate::range("budget_tokens", budget as i64, 1, request::MAX_BUDGET).or_raise() as usize;
    let memories = *validate::required("memories", memories.as_ref()).or_raise();
    let memories =
        validate::range("memories", memories as i64, 0, request::MAX_TOP_K).or_raise() as usize;
    let files = *validate::required("files", files.as_ref()).or_raise();
    let files = validate::range("files", files as i64, 0, 20).or_raise() as usize;
    let summaries: Vec<String> = summaries
        .into_iter()
        .flatten()
        .map(|n| {
            memory_core::summaries::name(Some(&n))
                .or_raise()
                .to_string()
        })
        .collect();
    query::context(
        agent_id, thread_id, text, budget, memories, files, &summaries,
    )
}
