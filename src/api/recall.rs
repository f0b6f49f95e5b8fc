//! Recall memory and token accounting (API.md "Recall memory and compaction"): every message
//! is stored with its token count, counted once at write time, so usage and compaction checks
//! are sums over stored counts and never re-tokenise history.

use crate::api::blocks::compile_for;
use crate::api::embed::{self, WriteEmbedding};
use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::pg::lookup::{self, Owned};
use crate::pg::tenant;
use memory_core::tokens::{self, Encoding, Usage};
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// Appends a message to a thread (creating the thread on first use) and returns
/// `{id, seq, tokens}`. `user_id` is needed only for a thread that does not exist yet.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments)]
fn message_append(
    thread_id: Option<&str>,
    role: Option<&str>,
    content: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
    tool_calls: default!(Option<JsonB>, "NULL"),
    tool_call_id: default!(Option<&str>, "NULL"),
    name: default!(Option<&str>, "NULL"),
) -> JsonB {
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let role = validate::role(role).or_raise();
    let content = validate::text("content", content).or_raise();
    let tool_call_id = validate::optional_id("tool_call_id", tool_call_id).or_raise();
    let name = validate::optional_id("name", name).or_raise();
    let tool_calls_text = match &tool_calls {
        None => None,
        Some(JsonB(v)) if v.is_array() => Some(v.to_string()),
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            "tool_calls must be a JSON array",
            Some("pass the assistant message's tool_calls list, e.g. '[{\"id\": ..., \"type\": \"function\", ...}]'".into()),
        ),
    };
    let user = match user_id {
        Some(_) => tenant::resolve(user_id),
        None => lookup::find_owner(Owned::Thread, thread_id).unwrap_or_else(|| {
            tenant::current().unwrap_or_else(|| {
                raise(
                    SqlState::NullValueNotAllowed,
                    format!("user_id is required to start thread \"{thread_id}\""),
                    Some("pass user_id, or SET memory_ext.user_id".into()),
                )
            })
        }),
    };
    let tokens = tokens::message_tokens(
        gucs::token_encoding(),
        role,
        content,
        name,
        tool_calls_text.as_deref(),
    ) as i32;
    // Embedded before the insert, so no lock is held while a provider answers.
    let embedding = embed::for_write(content);
    let (vector, model) = match &embedding {
        WriteEmbedding::Vector { model, text } => (Some(text.as_str()), Some(model.as_str())),
        _ => (None, None),
    };
    let (id, seq) = Spi::connect_mut(|c| {
        let row = c
            .update(
                "INSERT INTO memory.messages (user_id, thread_id, role, content, tool_calls, tool_call_id, name,
                                              token_count, embedding, embedding_model)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::{vector}, $10) RETURNING id::text, seq"
                    .replace("{vector}", &crate::pg::vector::unsized_ty())
                    .as_str(),
                None,
                &[
                    user.as_str().into(),
                    thread_id.into(),
                    role.into(),
                    content.into(),
                    tool_calls.into(),
                    tool_call_id.into(),
                    name.into(),
                    tokens.into(),
                    vector.into(),
                    model.into(),
                ],
            )?
            .first();
        Ok::<_, pgrx::spi::Error>((row.get::<String>(1)?.unwrap_or_default(), row.get::<i64>(2)?))
    })
    .spi("appending a message");
    if let WriteEmbedding::Failed { model, error } = &embedding {
        embed::record_failure(&user, "message", &id, model, error);
        pgrx::notice!("message stored without an embedding (the backfill will retry): {error}");
    }
    JsonB(json!({ "id": id, "seq": seq, "tokens": tokens }))
}

/// Tokens of `input` in a tiktoken encoding (`cl100k_base` default, or `o200k_base`).
#[pg_extern(immutable, parallel_safe)]
fn count_tokens(input: Option<&str>, encoding: default!(Option<&str>, "'cl100k_base'")) -> i32 {
    let input = validate::text("input", input).or_raise();
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
    tool_calls: Option<JsonB>,
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
    let user = lookup::owner(Owned::Thread, thread_id);
    let (messages_tokens, thread_agent) = Spi::connect(|c| {
        let row = c
            .select(
                "SELECT (SELECT coalesce(sum(token_count), 0)::bigint FROM memory.messages
                          WHERE user_id = $1 AND thread_id = $2 AND in_context),
                        (SELECT agent_id FROM memory.threads WHERE user_id = $1 AND thread_id = $2)",
                Some(1),
                &[user.as_str().into(), thread_id.into()],
            )?
            .first();
        Ok::<_, pgrx::spi::Error>((row.get::<i64>(1)?.unwrap_or(0), row.get::<String>(2)?))
    })
    .spi("summing message tokens");
    // The blocks in the prompt: the named agent's, else the agent the thread belongs to.
    let blocks_tokens = match agent_id.map(str::to_string).or(thread_agent) {
        Some(agent) => {
            let agent_user = lookup::owner(Owned::Agent, &agent);
            if agent_user != user {
                raise(
                    SqlState::InvalidParameterValue,
                    format!(
                        "agent \"{agent}\" and thread \"{thread_id}\" belong to different users"
                    ),
                    None,
                );
            }
            let now = Spi::get_one::<TimestampWithTimeZone>("SELECT now()")
                .spi("reading now()")
                .unwrap_or_else(|| raise(SqlState::NoDataFound, "now() returned NULL", None));
            gucs::token_encoding().count(&compile_for(&user, &agent, now)) as i64
        }
        None => 0,
    };
    tokens::usage(blocks_tokens, messages_tokens, window as i64).or_raise()
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
