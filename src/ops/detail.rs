//! Layer-2 detail memory (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Detail memory"):
//! `memory_ref_store`, `memory_ref_get`, `memory_capture` (src/api/detail.rs declares them).
//!
//! A stored detail is two rows: its Layer-1 line, a memory.items row of kind `detail` whose text
//! is the `[MemoryRef: <key> - <description>]` placeholder (so memory_query can find it, and an
//! agent that recalls it knows how to fetch it), and the content itself in memory.details, which
//! no retrieval path reads. Both are written by one statement's worth of work: an error in either
//! aborts both.

use crate::embed::write::for_write;
use crate::error::raise;
use crate::gucs;
use crate::ops::refine::{self, Refined};
use crate::ops::screen;
use crate::ops::search;
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, tenant, vector};
use memory_core::detail as rules;
use memory_core::request::Filters;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// A stored detail: its key, placeholder and Layer-1 memory id.
pub struct Stored {
    pub key: String,
    pub placeholder: String,
    pub id: String,
}

/// The first free key for `base` (a slug) in the tenant: base, then base_2, base_3 ... or a
/// UUID when there is no base (a description without Latin letters or digits). A transaction-scoped advisory lock
/// on (tenant, slug) makes two concurrent stores with the same description take different keys
/// instead of one failing on the primary key.
fn free_key(user: &str, base: Option<String>) -> String {
    let Some(base) = base else {
        return spi::one_opt::<String>("SELECT gen_random_uuid()::text", &[], "making a key")
            .unwrap_or_default();
    };
    spi::run(
        "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 7321))",
        &[user.into(), base.as_str().into()],
        "locking a key",
    );
    let taken: Vec<String> = spi::rows(
        include_str!("../../sql/queries/detail_taken_keys.sql"),
        &[user.into(), base.as_str().into()],
        "reading taken keys",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    );
    (1..)
        .map(|n| rules::numbered(&base, n))
        .find(|k| !taken.contains(k))
        .unwrap_or(base)
}

/// Stores `content` under a new key (the shared path of memory_ref_store and memory_capture),
/// its content and description already screened (src/ops/screen.rs).
#[allow(clippy::too_many_arguments)]
fn store(
    user: &str,
    content: &str,
    description: &str,
    kind: &str,
    thread: Option<&str>,
    agent: Option<&str>,
    metadata: Value,
    key_base: Option<String>,
) -> Stored {
    check_agent(user, agent);
    let description = rules::clean_description(description);
    if description.is_empty() {
        raise(
            SqlState::InvalidParameterValue,
            "description must not be empty",
            Some("describe the content in a few words, e.g. 'npm install log'".into()),
        );
    }
    let key = free_key(user, key_base.or_else(|| rules::slug(&description)));
    let placeholder = rules::placeholder(&key, &description);
    // The Layer-1 line is embedded (the provider sees the description, never the content).
    let embedding = for_write(&description);
    let (vector, model) = embedding.columns();
    let mut item_meta = metadata.clone();
    item_meta["ref"] = json!(key);
    item_meta["type"] = json!(kind);
    let id = spi::one_opt::<String>(
        &include_str!("../../sql/queries/detail_item.sql")
            .replace("{vector}", &vector::unsized_ty()),
        &[
            user.into(),
            placeholder.as_str().into(),
            key.as_str().into(),
            thread.into(),
            JsonB(item_meta).into(),
            vector.into(),
            model.into(),
            agent.into(),
        ],
        "storing a detail's memory",
    )
    .unwrap_or_default();
    let chunks = rules::chunks(content);
    spi::run(
        include_str!("../../sql/queries/detail_store.sql"),
        &[
            user.into(),
            key.as_str().into(),
            id.as_str().into(),
            kind.into(),
            description.as_str().into(),
            (content.chars().count() as i64).into(),
            thread.into(),
            JsonB(metadata).into(),
            agent.into(),
        ],
        "storing a detail",
    );
    for (n, chunk) in chunks.iter().enumerate() {
        spi::run(
            include_str!("../../sql/queries/detail_chunk.sql"),
            &[
                user.into(),
                key.as_str().into(),
                (n as i32).into(),
                chunk.as_str().into(),
            ],
            "storing a detail's content",
        );
    }
    embedding.record(user, "item", &id);
    events::record(Event {
        thread,
        memory_id: Some(&id),
        ..Event::new(user, Node::Hotpath, "store")
    });
    Stored {
        key,
        placeholder,
        id,
    }
}

/// The agent a detail is stored for (each result names its agent): one of
/// the tenant's agents (P0002 when unknown; 42501 when another tenant's).
fn check_agent(user: &str, agent: Option<&str>) {
    if let Some(a) = agent {
        if lookup::owner(Owned::Agent, a) != user {
            raise(
                SqlState::InsufficientPrivilege,
                format!("agent \"{a}\" belongs to another user"),
                None,
            );
        }
    }
}

/// memory_ref_store, its arguments checked: `{key, placeholder, id}`.
pub fn ref_store(
    user_id: Option<&str>,
    content: &str,
    description: &str,
    kind: &str,
    thread: Option<&str>,
    agent: Option<&str>,
    metadata: Value,
) -> Value {
    let user = tenant::resolve(user_id);
    // Screened before anything is stored or embedded (src/ops/screen.rs).
    let content = screen::text("detail", Some(&user), content);
    let description = screen::text("detail", Some(&user), description);
    let metadata = screen::json("detail", Some(&user), &metadata);
    if let Some(t) = thread {
        screen::identifier("thread_id", t);
    }
    let s = store(
        &user,
        &content,
        &description,
        kind,
        thread,
        agent,
        metadata,
        None,
    );
    json!({ "key": s.key, "placeholder": s.placeholder, "id": s.id })
}

/// memory_ref_get, its arguments checked: a page of a detail's content: `{content, offset,
/// next_offset, total}` in characters;
/// `next_offset` is NULL on the last page. P0002 for an unknown (or forgotten) key.
pub fn get(key: &str, offset: i64, limit: i64) -> Value {
    let user = tenant::acting();
    let rows: Vec<(String, String, Option<String>, i64)> = spi::rows_mut(
        include_str!("../../sql/queries/detail_page.sql"),
        &[
            key.into(),
            user.into(),
            offset.into(),
            limit.into(),
            (rules::CHUNK_CHARS as i64).into(),
        ],
        "reading a detail",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
                r.get::<i64>(4)?.unwrap_or(0),
            ))
        },
    );
    match rows.len() {
        0 => raise(
            SqlState::NoDataFound,
            format!("memory ref \"{key}\" not found"),
            None,
        ),
        1 => {}
        _ => raise(
            SqlState::InvalidParameterValue,
            format!("memory ref \"{key}\" exists for several tenants"),
            Some("SET memory_ext.user_id to the tenant you mean".into()),
        ),
    }
    let (_, _, page, total) = rows.into_iter().next().unwrap_or_default();
    let page = page.unwrap_or_default();
    let end = offset + page.chars().count() as i64;
    let next = (end < total).then_some(end);
    json!({ "content": page, "offset": offset, "next_offset": next, "total": total })
}

/// Whether `output` has more than `threshold` tokens, without tokenising 10 MB to find out
/// that it has more than 500: a token is at least one byte, and one token covers at most a few
/// dozen bytes of real text, so a prefix decides in all but borderline cases.
fn over_threshold(output: &str, threshold: usize) -> (bool, Option<usize>) {
    let enc = gucs::token_encoding();
    if output.len() <= threshold {
        return (false, None);
    }
    let mut cut = (threshold + 1).saturating_mul(8).min(output.len());
    while !output.is_char_boundary(cut) {
        cut -= 1;
    }
    let prefix_tokens = enc.count(&output[..cut]);
    if prefix_tokens > threshold {
        return (true, None);
    }
    if cut == output.len() {
        return (false, Some(prefix_tokens));
    }
    let all = enc.count(output);
    (all > threshold, Some(all))
}

/// The LLM's one-line description of an output.
fn llm_description(
    cfg: &memory_providers::llm::LlmConfig,
    command: &str,
    output: &str,
) -> Result<String, String> {
    // The start and the end of an output say the most (what ran, how it ended); the model sees
    // up to 4,500 characters of it.
    let n = output.chars().count();
    let (head, tail): (String, String) = if n <= 4500 {
        (output.to_string(), String::new())
    } else {
        (
            output.chars().take(3000).collect(),
            output.chars().skip(n - 1500).collect(),
        )
    };
    let user = format!("Command: {command}\n\nOutput (start):\n{head}\n\nOutput (end):\n{tail}");
    let system = "Describe this command output in one line of at most 15 words: what it contains and how the command went. Only output the line.";
    // One line of 15 words: a model that goes on is cut at 48 tokens.
    let a = memory_providers::llm::chat_full(cfg, system, &user, false, Some(48))
        .map_err(|e| e.to_string())?
        .text;
    let line = rules::clean_description(&memory_core::summary::limit_words(
        &memory_core::text::normalize(&a),
        20,
    ));
    if line.is_empty() {
        return Err("the LLM answered nothing".into());
    }
    Ok(line)
}

/// The model's description in place of the rule's for a captured output (`capture` marked it
/// `pending`): the detail's description and its Layer-1 line (what memory_ref_search finds) with
/// its embedding. The placeholder the agent was given keeps working: a key opens it. Conditional
/// on the mark, under the row's lock, like src/ops/compaction.rs `refine`; after
/// src/ops/refine.rs `REFINE_ATTEMPTS` failed calls the rule's description stays.
pub fn refine(cfg: &memory_providers::llm::LlmConfig, user: &str, key: &str) -> Refined {
    let Some((command, item, mut meta, thread, content)) = spi::row(
        include_str!("../../sql/queries/refine_description_read.sql"),
        &[user.into(), key.into()],
        "reading a pending description",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<crate::pg::json::JsonText>(3)?
                    .map(|j| j.value())
                    .unwrap_or(Value::Null),
                r.get::<String>(4)?,
                r.get::<String>(5)?.unwrap_or_default(),
            ))
        },
    ) else {
        return Refined::Gone;
    };
    let write = |description: Option<&str>, meta: &Value| {
        spi::run(
            include_str!("../../sql/queries/refine_description_write.sql"),
            &[
                user.into(),
                key.into(),
                description.into(),
                JsonB(meta.clone()).into(),
            ],
            "refining a description",
        );
    };
    let event = |ok| refine::event(user, thread.as_deref(), Some(&item), ok);
    match llm_description(cfg, &command, &content)
        .and_then(|t| refine::screened("detail", user, &t))
    {
        Ok(line) => {
            refine::done(&mut meta, "described_by");
            write(Some(&line), &meta);
            let embedding = for_write(&line);
            let (vector, model) = embedding.columns();
            spi::run(
                &include_str!("../../sql/queries/refine_description_item.sql")
                    .replace("{vector}", &vector::unsized_ty()),
                &[
                    user.into(),
                    item.as_str().into(),
                    rules::placeholder(key, &line).into(),
                    vector.into(),
                    model.into(),
                ],
                "refining a detail's memory",
            );
            embedding.record(user, "item", &item);
            event(true);
            Refined::Done
        }
        Err(e) => {
            let outcome = refine::failed(&mut meta, e);
            write(None, &meta);
            event(false);
            outcome
        }
    }
}

/// memory_capture, its arguments checked: the output itself when it has at most `threshold`
/// tokens, else the output goes to detail memory and the answer is one line with its
/// placeholder, status and key lines.
pub fn capture(
    user_id: Option<&str>,
    command: &str,
    output: &str,
    threshold: usize,
    thread: Option<&str>,
    agent: Option<&str>,
) -> String {
    let user = tenant::resolve(user_id);
    let (over, tokens) = over_threshold(output, threshold);
    if !over {
        return output.to_string();
    }
    // Screened before a model describes it or anything is stored (src/ops/screen.rs).
    let output = &screen::text("detail", Some(&user), output);
    let command = &screen::text("detail", Some(&user), command);
    let o = rules::outcome(output);
    // Described by rule now; a configured model's line replaces it in the background (the
    // worker's `refine` job, `refine` below): a capture never waits for the model.
    let description = rules::capture_description(command, &o);
    let mut meta = json!({ "command": command, "status": o.status, "lines": o.lines });
    if gucs::llm().is_some() {
        meta["pending"] = json!("llm");
    }
    if let Some(t) = tokens {
        meta["tokens"] = json!(t);
    }
    // Keys of captured outputs name their command (`cmd_npm_install`), like the `cmd_log_123` example of docs/design.md "Detail memory".
    let base = rules::slug(command).map(|s| {
        let s: String = format!("cmd_{s}")
            .chars()
            .take(rules::MAX_SLUG_CHARS)
            .collect();
        s.trim_end_matches('_').to_string()
    });
    let s = store(
        &user,
        output,
        &description,
        "command_output",
        thread,
        agent,
        meta,
        base,
    );
    rules::capture_line(command, &s.placeholder, &o)
}

/// A memory_ref_search row: key, description, type, thread_id, agent_id, chars, created_at,
/// score.
pub type Found = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    i64,
    TimestampWithTimeZone,
    f64,
);

/// memory_ref_search (the tool `search_memory`): the tenant's stored details whose
/// description matches `query`, ranked by memory_query's engine over their Layer-1 lines
/// (src/ops/search/), narrowed to a thread and an agent when given. The content is never
/// searched: it is what the key opens.
pub fn search(
    user_id: Option<&str>,
    query: &str,
    thread: Option<&str>,
    agent: Option<&str>,
    limit: usize,
) -> Vec<Found> {
    let user = tenant::resolve(user_id);
    let filters = Filters {
        user_id: Some(user.clone()),
        kind: Some("detail".into()),
        thread_id: thread.map(str::to_string),
        agent_id: agent.map(str::to_string),
        ..Filters::default()
    };
    let mut hits = search::memories(
        &search::Owners::only(&user),
        query,
        None,
        &filters,
        None,
        limit,
        None,
        false,
    );
    // The ranking may add neighbours of its best (episode links): the limit holds.
    hits.truncate(limit);
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
    spi::rows(
        include_str!("../../sql/queries/detail_found.sql"),
        &[user.as_str().into(), ids.into(), scores.into()],
        "reading found details",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
                r.get::<String>(4)?,
                r.get::<String>(5)?,
                r.get::<i64>(6)?.unwrap_or(0),
                r.get::<TimestampWithTimeZone>(7)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
                r.get::<f64>(8)?.unwrap_or(0.0),
            ))
        },
    )
}
