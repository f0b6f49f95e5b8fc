//! Recall memory and token accounting (docs/api.md "Recall memory and compaction"): messages,
//! their search, and token counts against a context window. The work is in
//! src/ops/recall.rs.

use crate::error::{raise, OrRaise};
use crate::gucs;
use crate::ops::idempotency;
use crate::ops::recall::{self as ops, Message};
use crate::pg::json::Json;
use memory_core::tokens::{self, Encoding, Usage};
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// Appends a message to a thread (creating the thread on first use) and returns
/// `{id, seq, tokens}`. `user_id` is needed only for a thread that does not exist yet.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments)]
fn message_append(
    thread_id: Option<&str>,
    role: Option<&str>,
    content: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
    tool_calls: default!(Option<Json>, "NULL"),
    tool_call_id: default!(Option<&str>, "NULL"),
    name: default!(Option<&str>, "NULL"),
    created_at: default!(Option<TimestampWithTimeZone>, "NULL"),
    metadata: default!(Option<Json>, "NULL"),
    idempotency_key: default!(Option<&str>, "NULL"),
) -> JsonB {
    let key = idempotency::of_call("message_append", idempotency_key, || {
        vec![
            ("thread_id", json!(thread_id)),
            ("role", json!(role)),
            ("content", json!(content)),
            ("user_id", json!(user_id)),
            (
                "tool_calls",
                tool_calls.as_ref().map_or(Value::Null, |j| j.0.clone()),
            ),
            ("tool_call_id", json!(tool_call_id)),
            ("name", json!(name)),
            // The instant, not its text (which follows the session's TimeZone).
            ("created_at", json!(created_at.map(|t| t.into_inner()))),
            (
                "metadata",
                metadata.as_ref().map_or(Value::Null, |j| j.0.clone()),
            ),
        ]
    });
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let role = validate::role(role).or_raise();
    let content = crate::pg::limits::text("content", content);
    let tool_call_id = validate::optional_id("tool_call_id", tool_call_id).or_raise();
    let name = validate::optional_id("name", name).or_raise();
    if let Some(Json(m)) = &metadata {
        if !m.is_object() {
            raise(
                SqlState::InvalidParameterValue,
                "metadata must be a JSON object",
                None,
            )
        }
    }
    let tool_calls_text = match &tool_calls {
        None => None,
        Some(Json(v)) if v.is_array() => Some(v.to_string()),
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            "tool_calls must be a JSON array",
            Some("pass the assistant message's tool_calls list, e.g. '[{\"id\": ..., \"type\": \"function\", ...}]'".into()),
        ),
    };
    JsonB(ops::append(
        Message {
            thread: thread_id,
            role,
            content,
            user_id,
            tool_calls,
            tool_calls_text,
            tool_call_id,
            name,
            item: None,
            created_at,
            metadata,
        },
        key.as_ref(),
    ))
}

/// `message_append` for the tenant `user_id`: the form Citus runs wholly on that tenant's worker
/// (docs/citus.md "One round trip"). Strict: a NULL argument returns NULL, so the optional
/// arguments are the keys of `options` (`tool_calls`, `tool_call_id`, `name`, `created_at`,
/// `metadata`, `idempotency_key`, as message_append names them; a JSON null is the same as
/// leaving the key out).
#[pg_extern(volatile, parallel_unsafe, strict)]
fn message_append_for(
    user_id: &str,
    thread_id: &str,
    role: &str,
    content: &str,
    options: default!(Json, "'{}'"),
) -> JsonB {
    let Json(options) = options;
    let Value::Object(options) = options else {
        raise(
            SqlState::InvalidParameterValue,
            "options must be a JSON object",
            Some("e.g. '{\"metadata\": {...}, \"idempotency_key\": \"...\"}'".into()),
        )
    };
    const KEYS: [&str; 6] = [
        "tool_calls",
        "tool_call_id",
        "name",
        "created_at",
        "metadata",
        "idempotency_key",
    ];
    if let Some(k) = options.keys().find(|k| !KEYS.contains(&k.as_str())) {
        raise(
            SqlState::InvalidParameterValue,
            format!("options has an unknown key \"{k}\""),
            Some(format!("the keys are {}", KEYS.join(", "))),
        )
    }
    let value = |k: &str| options.get(k).filter(|v| !v.is_null());
    let text = |k: &str| {
        value(k).map(|v| {
            v.as_str().unwrap_or_else(|| {
                raise(
                    SqlState::InvalidParameterValue,
                    format!("options.{k} must be a string"),
                    None,
                )
            })
        })
    };
    // Postgres' own reading of a timestamptz (and its 22007 for a bad one).
    let created_at = text("created_at").map(|t| {
        crate::pg::spi::one_opt::<TimestampWithTimeZone>(
            "SELECT $1::timestamptz",
            &[t.into()],
            "reading options.created_at",
        )
        .unwrap_or_else(|| {
            raise(
                SqlState::InvalidParameterValue,
                "options.created_at is not a time",
                None,
            )
        })
    });
    crate::pg::citus::routed(user_id, || {
        message_append(
            Some(thread_id),
            Some(role),
            Some(content),
            Some(user_id),
            value("tool_calls").cloned().map(Json),
            text("tool_call_id"),
            text("name"),
            created_at,
            value("metadata").cloned().map(Json),
            text("idempotency_key"),
        )
    })
}

/// Recall search (`conversation_search`, docs/design.md "Recall and archival memory"): a
/// thread's messages, in context or not, by keyword and meaning together (src/ops/search.rs).
/// Without a query vector (provider down) it is keyword-only.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::type_complexity)]
fn conversation_search(
    thread_id: Option<&str>,
    query: Option<&str>,
    roles: default!(Option<Vec<Option<String>>>, "NULL"),
    limit: default!(Option<i32>, 5),
    start_date: default!(Option<TimestampWithTimeZone>, "NULL"),
    end_date: default!(Option<TimestampWithTimeZone>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(id, pgrx::Uuid),
        name!(seq, i64),
        name!(role, String),
        name!(content, String),
        name!(created_at, TimestampWithTimeZone),
        name!(score, f64),
    ),
> {
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let query = crate::pg::limits::text("query", query);
    crate::pg::limits::query("query", query);
    let limit = *validate::required("limit", limit.as_ref()).or_raise();
    let limit = validate::range("limit", limit as i64, 1, 1000).or_raise() as usize;
    let roles: Option<Vec<String>> = roles.map(|r| {
        r.into_iter()
            .map(|x| validate::role(x.as_deref()).or_raise().to_string())
            .collect()
    });
    let hits = ops::search(thread_id, query, roles, start_date, end_date, limit);
    TableIterator::new(
        hits.into_iter()
            .map(|h| (h.id, h.seq, h.role, h.content, h.created_at, h.score)),
    )
}

/// Tokens of `input` in a tiktoken encoding (`cl100k_base` default, or `o200k_base`).
#[pg_extern(immutable, parallel_safe)]
fn count_tokens(input: Option<&str>, encoding: default!(Option<&str>, "'cl100k_base'")) -> i32 {
    let input = crate::pg::limits::text("input", input);
    let enc: Encoding = validate::required("encoding", encoding)
        .or_raise()
        .parse()
        .or_raise();
    enc.count(input) as i32
}

/// What the triggers use to count a message written by a plain INSERT/UPDATE.
#[pg_extern(stable, parallel_safe, schema = "memory")]
fn message_token_count(
    role: Option<&str>,
    content: Option<&str>,
    name: Option<&str>,
    tool_calls: Option<Json>,
) -> i32 {
    let tc = tool_calls.map(|j| j.0.to_string());
    tokens::message_tokens(
        gucs::token_encoding(),
        role.unwrap_or(""),
        content.unwrap_or(""),
        name,
        tc.as_deref(),
    ) as i32
}

/// Compiled blocks + in-context messages of a thread, against a context window.
fn usage_of(thread_id: Option<&str>, context_window: Option<i32>, agent_id: Option<&str>) -> Usage {
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let window = *validate::required("context_window", context_window.as_ref()).or_raise();
    tokens::check_window(window as i64).or_raise();
    let agent_id = validate::optional_id("agent_id", agent_id).or_raise();
    ops::usage(thread_id, window as i64, agent_id)
}

/// `{blocks_tokens, messages_tokens, total_tokens, context_window, ratio}`.
#[pg_extern(stable, parallel_restricted)]
fn context_usage(
    thread_id: Option<&str>,
    context_window: Option<i32>,
    agent_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let u = usage_of(thread_id, context_window, agent_id);
    JsonB(serde_json::to_value(u).unwrap_or_default())
}

/// `total_tokens >= threshold * context_window`.
#[pg_extern(stable, parallel_restricted)]
fn needs_compaction(
    thread_id: Option<&str>,
    context_window: Option<i32>,
    threshold: default!(Option<f32>, 0.8),
    agent_id: default!(Option<&str>, "NULL"),
) -> bool {
    let threshold = *validate::required("threshold", threshold.as_ref()).or_raise();
    let u = usage_of(thread_id, context_window, agent_id);
    // f32's Display is its shortest round-trip decimal, the same digits Postgres prints.
    tokens::needs_compaction(&u, &threshold.to_string()).or_raise()
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;
    use pgrx::JsonB;

    #[pg_test]
    fn append_numbers_messages_and_counts_tokens() {
        Spi::run("SET memory_ext.user_id = 'u1'").unwrap();
        let a = Spi::get_one::<JsonB>("SELECT message_append('t1', 'user', 'hello world')")
            .unwrap()
            .unwrap();
        assert_eq!(a.0["seq"], 1);
        assert_eq!(a.0["tokens"], 6); // 3 framing + "user" + "hello world"
        let b = Spi::get_one::<JsonB>("SELECT message_append('t1', 'assistant', 'hi')")
            .unwrap()
            .unwrap();
        assert_eq!(b.0["seq"], 2);
        let rev = Spi::get_one::<i64>("SELECT revision FROM memory.threads WHERE thread_id = 't1'")
            .unwrap();
        assert_eq!(rev, Some(2));
    }

    #[pg_test]
    fn plain_insert_gets_seq_and_tokens_from_triggers() {
        Spi::run("INSERT INTO memory.messages (user_id, thread_id, role, content) VALUES ('u9', 't9', 'user', 'hello world')")
            .unwrap();
        let (seq, tokens) = Spi::get_two::<i64, i32>(
            "SELECT seq, token_count FROM memory.messages WHERE thread_id = 't9'",
        )
        .unwrap();
        assert_eq!((seq, tokens), (Some(1), Some(6)));
    }

    #[pg_test(error = "invalid role \"robot\"")]
    fn bad_role_is_rejected() {
        Spi::run("SELECT message_append('t1', 'robot', 'x', 'u1')").unwrap();
    }

    #[pg_test]
    fn count_tokens_both_encodings() {
        assert_eq!(
            Spi::get_one::<i32>("SELECT count_tokens('hello world')").unwrap(),
            Some(2)
        );
        assert_eq!(
            Spi::get_one::<i32>("SELECT count_tokens('hello world', 'o200k_base')").unwrap(),
            Some(2)
        );
    }
}
