//! Recall memory and token accounting (docs/api.md "Recall memory and compaction"): every message
//! is stored with its token count, counted once at write time, so usage and compaction checks
//! are sums over stored counts and never re-tokenise history.

use crate::api::blocks::compile_for;
use crate::api::embed::{self, WriteEmbedding};
use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::pg::json::Json;
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
    tool_calls: default!(Option<Json>, "NULL"),
    tool_call_id: default!(Option<&str>, "NULL"),
    name: default!(Option<&str>, "NULL"),
) -> JsonB {
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let role = validate::role(role).or_raise();
    let content = crate::pg::limits::text("content", content);
    let tool_call_id = validate::optional_id("tool_call_id", tool_call_id).or_raise();
    let name = validate::optional_id("name", name).or_raise();
    let tool_calls_text = match &tool_calls {
        None => None,
        Some(Json(v)) if v.is_array() => Some(v.to_string()),
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
    let (vector, model) = embedding.columns();
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

/// Messages taken from each side (keyword, vector) before fusion.
const SEARCH_PER_SIDE: i64 = 50;

/// Recall search (`conversation_search`, docs/design.md "Recall and archival memory"): a thread's messages, in context or
/// not, by keyword and meaning together: min-max fused, half each, like memory_query's base
/// score. Without a query vector (provider down) it is keyword-only.
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
    let user = lookup::owner(Owned::Thread, thread_id);
    let lexemes = crate::api::query::lexemes(query);
    let tsq = crate::api::query::tsquery(&lexemes, &crate::api::query::tenant_lexeme(&user));
    let qvec = crate::embed::query_vector(query, "searching by keyword only");
    let (dense, similarity) = match &qvec {
        Some((m, v)) => {
            let crate::pg::vector::Cosine { model, ty: vt, op } =
                crate::pg::vector::Cosine::of(&m.id, v.len());
            (
                format!(
                    ", dense AS (
    SELECT m.id FROM memory.messages m
    WHERE m.user_id = $1 AND m.thread_id = $2 AND m.embedding_model = {model}
      AND ($5::text[] IS NULL OR m.role = ANY($5)) AND ($6::timestamptz IS NULL OR m.created_at >= $6)
      AND ($7::timestamptz IS NULL OR m.created_at < $7)
    ORDER BY m.embedding::{vt} {op} $4::{vt}
    LIMIT $8
)"
                ),
                format!("CASE WHEN m.embedding_model = {model} THEN (1 - (m.embedding::{vt} {op} $4::{vt}))::float8 END"),
            )
        }
        None => (
            ", dense AS (SELECT NULL::uuid AS id WHERE false)".into(),
            "NULL::float8".into(),
        ),
    };
    let sql = include_str!("../../sql/queries/conversation_search.sql")
        .replace("{dense}", &dense)
        .replace("{similarity}", &similarity);
    type Row = (
        pgrx::Uuid,
        i64,
        String,
        String,
        TimestampWithTimeZone,
        f64,
        Option<f64>,
    );
    let rows: Vec<Row> = crate::pg::vector::with_iterative_scan(|| {
        Spi::connect(|c| {
            c.select(
                &sql,
                None,
                &[
                    user.as_str().into(),
                    thread_id.into(),
                    tsq.into(),
                    qvec.as_ref()
                        .map(|(_, v)| crate::embed::vector_text(v))
                        .into(),
                    roles.into(),
                    start_date.into(),
                    end_date.into(),
                    SEARCH_PER_SIDE.into(),
                ],
            )?
            .map(|r| {
                Ok((
                    r.get::<pgrx::Uuid>(1)?
                        .unwrap_or(pgrx::Uuid::from_bytes([0; 16])),
                    r.get::<i64>(2)?.unwrap_or(0),
                    r.get::<String>(3)?.unwrap_or_default(),
                    r.get::<String>(4)?.unwrap_or_default(),
                    r.get::<TimestampWithTimeZone>(5)?
                        .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
                    r.get::<f64>(6)?.unwrap_or(0.0),
                    r.get::<f64>(7)?,
                ))
            })
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
        })
        .spi("searching messages")
    });
    let lex: Vec<f64> = rows.iter().map(|r| r.5).collect();
    let sims: Vec<f64> = rows.iter().map(|r| r.6.unwrap_or(f64::NAN)).collect();
    // Ties: the later message first.
    let (scores, mut order) =
        memory_core::rank::fused_order(&lex, &sims, |a, b| rows[b].1.cmp(&rows[a].1));
    order.truncate(limit);
    TableIterator::new(order.into_iter().map(move |i| {
        let r = rows[i].clone();
        (
            r.0,
            r.1,
            r.2,
            r.3,
            r.4,
            (scores[i] * 10_000.0).round() / 10_000.0,
        )
    }))
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
