//! Recall memory (docs/api.md "Recall memory and compaction"): every message is stored with its
//! token count, counted once at write time, so usage and compaction checks are sums over stored
//! counts and never re-tokenise history. Its search is the hybrid engine's
//! (src/ops/search.rs).

use crate::embed::write::{for_write, for_writes, WriteEmbedding};
use crate::error::{raise, OrRaise};
use crate::gucs;
use crate::ops::search::{self, Conversations, MessageHit};
use crate::ops::{blocks, idempotency, screen};
use crate::pg::json::Json;
use crate::pg::lookup::{self, Owned};
use crate::pg::{limits, spi, tenant, vector};
use memory_core::request::Idempotency;
use memory_core::tokens::{self, Usage};
use memory_core::SqlState;
use pgrx::prelude::*;
use serde_json::{json, Value};

/// A message to append, its arguments checked.
pub struct Message<'a> {
    pub thread: &'a str,
    pub role: &'a str,
    pub content: &'a str,
    pub user_id: Option<&'a str>,
    pub tool_calls: Option<Json>,
    pub tool_calls_text: Option<String>,
    pub tool_call_id: Option<&'a str>,
    pub name: Option<&'a str>,
    /// The session item it was added as (src/ops/session.rs), kept verbatim.
    pub item: Option<Json>,
    /// When it was said, for history brought in from elsewhere (default: now).
    pub created_at: Option<TimestampWithTimeZone>,
    /// The caller's own fields (a JSON object), kept with the message.
    pub metadata: Option<Json>,
}

/// message_append: stores the message (creating the thread on first use); `{id, seq, tokens}`.
/// `user_id` is needed only for a thread that does not exist yet.
/// With an idempotency key the message is appended once per key (src/ops/idempotency.rs).
pub fn append(m: Message<'_>, key: Option<&Idempotency>) -> Value {
    within_limits(&m);
    let user = writer(&m);
    idempotency::once(&user, "message_append", key, || {
        // Screened before it is embedded or stored (src/ops/screen.rs).
        let content = screen::text("message", m.user_id, m.content);
        let m = screened(Message {
            content: &content,
            ..m
        });
        // Embedded before the insert, so no lock is held while a provider answers.
        let embedding = for_write(m.content);
        append_embedded(m, &user, embedding)
    })
}

/// The message's tool calls and stored item screened as its content was: they hold the same
/// kind of text (a tool call's arguments, the item the content came from).
fn screened(mut m: Message<'_>) -> Message<'_> {
    // The names it is stored under: refused rather than rewritten (screen::identifier).
    screen::identifier("thread_id", m.thread);
    if let Some(id) = m.tool_call_id {
        screen::identifier("tool_call_id", id);
    }
    if let Some(name) = m.name {
        screen::identifier("name", name);
    }
    if let Some(Json(v)) = m.tool_calls.take() {
        let v = screen::json("message", m.user_id, &v);
        m.tool_calls_text = Some(v.to_string());
        m.tool_calls = Some(Json(v));
    }
    if let Some(Json(v)) = m.item.take() {
        m.item = Some(Json(screen::json("message", m.user_id, &v)));
    }
    if let Some(Json(v)) = m.metadata.take() {
        m.metadata = Some(Json(screen::json("message", m.user_id, &v)));
    }
    m
}

/// One size rule for every way a message is written (message_append, session items, episodes):
/// its content, and the item it was stored from, within `memory_ext.max_value_bytes` (22001).
fn within_limits(m: &Message<'_>) {
    limits::value_bytes("content", m.content.len());
    if let Some(t) = &m.tool_calls_text {
        limits::value_bytes("tool_calls", t.len());
    }
    if let Some(Json(item)) = &m.item {
        limits::value_bytes("item", item.to_string().len());
    }
    if let Some(Json(v)) = &m.metadata {
        limits::value_bytes("metadata", v.to_string().len());
    }
}

/// Appends messages in order, their embeddings made in one batch first (session_add_items).
/// Every message is checked before anything is embedded or written.
pub fn append_all(messages: Vec<Message<'_>>) {
    messages.iter().for_each(within_limits);
    let contents: Vec<String> = messages
        .iter()
        .map(|m| screen::text("message", m.user_id, m.content))
        .collect();
    let messages: Vec<Message<'_>> = messages
        .into_iter()
        .zip(&contents)
        .map(|(m, content)| screened(Message { content, ..m }))
        .collect();
    let texts: Vec<&str> = messages.iter().map(|m| m.content).collect();
    let embeddings = for_writes(&texts);
    for (m, e) in messages.into_iter().zip(embeddings) {
        let user = writer(&m);
        append_embedded(m, &user, e);
    }
}

/// The tenant a message is written for: the one named (a space the caller writes into among
/// them), else the thread's owner, else the acting tenant (a new thread).
fn writer(m: &Message<'_>) -> String {
    match m.user_id {
        Some(_) => crate::pg::spaces::resolve_writer(m.user_id),
        None => lookup::find_owner(Owned::Thread, m.thread).unwrap_or_else(|| {
            tenant::acting().unwrap_or_else(|| {
                raise(
                    SqlState::NullValueNotAllowed,
                    format!("user_id is required to start thread \"{}\"", m.thread),
                    Some("pass user_id, or SET memory_ext.user_id".into()),
                )
            })
        }),
    }
}

fn append_embedded(m: Message<'_>, user: &str, embedding: WriteEmbedding) -> Value {
    let tokens = tokens::message_tokens(
        gucs::token_encoding(),
        m.role,
        m.content,
        m.name,
        m.tool_calls_text.as_deref(),
    ) as i32;
    let (vector, model) = embedding.columns();
    let (id, seq) = spi::row(
        &include_str!("../../sql/queries/recall_append.sql")
            .replace("{vector}", &vector::unsized_ty()),
        &[
            user.into(),
            m.thread.into(),
            m.role.into(),
            m.content.into(),
            m.tool_calls.into(),
            m.tool_call_id.into(),
            m.name.into(),
            tokens.into(),
            vector.into(),
            model.into(),
            m.item.into(),
            m.created_at.into(),
            m.metadata.into(),
        ],
        "appending a message",
        |r| Ok((r.get::<String>(1)?.unwrap_or_default(), r.get::<i64>(2)?)),
    )
    .unwrap_or_default();
    if let Some(error) = embedding.record(user, "message", &id) {
        pgrx::notice!("message stored without an embedding (the backfill will retry): {error}");
    }
    json!({ "id": id, "seq": seq, "tokens": tokens })
}

/// conversation_search: the thread's messages, in context or not, by keyword and meaning.
pub fn search(
    thread: &str,
    query: &str,
    roles: Option<Vec<String>>,
    start: Option<TimestampWithTimeZone>,
    end: Option<TimestampWithTimeZone>,
    limit: usize,
) -> Vec<MessageHit> {
    let user = lookup::owner(Owned::Thread, thread);
    search::messages(
        &search::Owners::only(&user),
        Conversations::Thread(thread),
        query,
        roles,
        start,
        end,
        limit,
    )
}

/// The conversation_search tool without a thread: the messages of every thread `agent` reads,
/// its spaces' conversations among them (docs/api.md "Spaces").
pub fn search_agent(
    user: &str,
    agent: &str,
    query: &str,
    roles: Option<Vec<String>>,
    start: Option<TimestampWithTimeZone>,
    end: Option<TimestampWithTimeZone>,
    limit: usize,
) -> Vec<MessageHit> {
    let owners = search::Owners {
        user: user.to_string(),
        spaces: crate::pg::spaces::readable_together(Some(agent)),
    };
    crate::pg::spaces::as_agent(Some(agent), || {
        search::messages(
            &owners,
            Conversations::Agent(agent),
            query,
            roles,
            start,
            end,
            limit,
        )
    })
}

/// Compiled blocks + in-context messages of a thread, against a context window of `window`
/// tokens (already checked).
pub fn usage(thread: &str, window: i64, agent_id: Option<&str>) -> Usage {
    let user = lookup::owner(Owned::Thread, thread);
    // Read-only (context_usage is STABLE): one row, the statement aggregates.
    let (messages_tokens, thread_agent) = spi::rows(
        include_str!("../../sql/queries/recall_usage.sql"),
        &[user.as_str().into(), thread.into()],
        "summing message tokens",
        |r| Ok((r.get::<i64>(1)?.unwrap_or(0), r.get::<String>(2)?)),
    )
    .pop()
    .unwrap_or((0, None));
    // The blocks in the prompt: the named agent's, else the agent the thread belongs to.
    let blocks_tokens = match agent_id.map(str::to_string).or(thread_agent) {
        Some(agent) => {
            let agent_user = lookup::owner(Owned::Agent, &agent);
            if agent_user != user {
                raise(
                    SqlState::InvalidParameterValue,
                    format!("agent \"{agent}\" and thread \"{thread}\" belong to different users"),
                    None,
                );
            }
            let now = spi::rows("SELECT now()", &[], "reading now()", |r| {
                r.get::<TimestampWithTimeZone>(1)
            })
            .pop()
            .flatten()
            .unwrap_or_else(|| raise(SqlState::NoDataFound, "now() returned NULL", None));
            gucs::token_encoding().count(&blocks::compile(&user, &agent, now)) as i64
        }
        None => 0,
    };
    tokens::usage(blocks_tokens, messages_tokens, window).or_raise()
}
