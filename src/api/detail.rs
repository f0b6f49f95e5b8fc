//! Layer-2 detail memory (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Detail memory"):
//! `memory_ref_store`, `memory_ref_get`, `memory_capture`.
//!
//! A stored detail is two rows: its Layer-1 line, a memory.items row of kind `detail` whose text
//! is the `[MemoryRef: <key> - <description>]` placeholder (so memory_query can find it, and an
//! agent that recalls it knows how to fetch it), and the content itself in memory.details, which
//! no retrieval path reads. Both are written by one statement's worth of work: an error in either
//! aborts both.

use crate::api::embed::{self as emb, WriteEmbedding};
use crate::api::events::{self, Event, Node};
use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::pg::json::Json;
use crate::pg::{spi, tenant};
use memory_core::detail as rules;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// Largest page memory_ref_get returns, in characters.
const MAX_PAGE_CHARS: i64 = 1_000_000;

/// A stored detail: its key, placeholder and Layer-1 memory id.
pub struct Stored {
    pub key: String,
    pub placeholder: String,
    pub id: String,
}

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
    let ok = !t.is_empty()
        && t.len() <= 50
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !ok {
        raise(
            SqlState::InvalidParameterValue,
            format!("invalid type \"{}\"", t.chars().take(60).collect::<String>()),
            Some("a type is 1-50 letters, digits, '_', '.' or '-', e.g. command_output, file_content".into()),
        );
    }
    t
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
    Spi::run_with_args(
        "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 7321))",
        &[user.into(), base.as_str().into()],
    )
    .spi("locking a key");
    let taken: Vec<String> = Spi::connect(|c| {
        c.select(
            "SELECT key FROM memory.details
             WHERE user_id = $1 AND (key = $2 OR (starts_with(key, $2 || '_') AND substr(key, length($2) + 2) ~ '^[0-9]+$'))",
            None,
            &[user.into(), base.as_str().into()],
        )?
        .map(|r| r.get::<String>(1).map(Option::unwrap_or_default))
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("reading taken keys");
    (1..)
        .map(|n| rules::numbered(&base, n))
        .find(|k| !taken.contains(k))
        .unwrap_or(base)
}

/// Stores `content` under a new key (the shared path of memory_ref_store and memory_capture).
pub fn store(
    user: &str,
    content: &str,
    description: &str,
    kind: &str,
    thread: Option<&str>,
    metadata: Value,
    key_base: Option<String>,
) -> Stored {
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
    let embedding = emb::for_write(&description);
    let (vector, model) = embedding.columns();
    let mut item_meta = metadata.clone();
    item_meta["ref"] = json!(key);
    item_meta["type"] = json!(kind);
    let id = spi::one_opt::<String>(
        &format!(
            "INSERT INTO memory.items (user_id, kind, text, key, thread_id, metadata, embedding, embedding_model)
             VALUES ($1, 'detail', $2, $3, $4, $5, $6::{v}, $7) RETURNING id::text",
            v = crate::pg::vector::unsized_ty()
        ),
        &[
            user.into(),
            placeholder.as_str().into(),
            key.as_str().into(),
            thread.into(),
            JsonB(item_meta).into(),
            vector.into(),
            model.into(),
        ],
        "storing a detail's memory",
    )
    .unwrap_or_default();
    let chunks = rules::chunks(content);
    Spi::run_with_args(
        "WITH d AS (
             INSERT INTO memory.details (user_id, key, item_id, type, description, chars, thread_id, metadata)
             VALUES ($1, $2, $3::uuid, $4, $5, $6, $7, $8) RETURNING user_id, key
         )
         INSERT INTO memory.detail_chunks (user_id, key, n, content)
         SELECT d.user_id, d.key, c.n - 1, c.content FROM d, unnest($9::text[]) WITH ORDINALITY AS c(content, n)",
        &[
            user.into(),
            key.as_str().into(),
            id.as_str().into(),
            kind.into(),
            description.as_str().into(),
            (content.chars().count() as i64).into(),
            thread.into(),
            JsonB(metadata).into(),
            chunks.into(),
        ],
    )
    .spi("storing a detail");
    if let WriteEmbedding::Failed { model, error } = &embedding {
        emb::record_failure(user, "item", &id, model, error);
    }
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

/// `memory_ref_store(content, description, type, user_id, thread_id, metadata)` (sql/detail.sql
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
) -> JsonB {
    let content = crate::pg::limits::text("content", content);
    let description = crate::pg::limits::text("description", description);
    let kind = detail_type(kind);
    let thread = validate::optional_id("thread_id", thread_id).or_raise();
    let metadata = object("metadata", metadata);
    let user = tenant::resolve(user_id);
    let s = store(&user, content, description, kind, thread, metadata, None);
    JsonB(json!({ "key": s.key, "placeholder": s.placeholder, "id": s.id }))
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
    let user = tenant::current();
    let rows: Vec<(String, String, Option<String>, i64)> = Spi::connect_mut(|c| {
        c.update(
            // Only the chunks the page spans are read ($5 = characters per chunk).
            "WITH d AS (
                 SELECT d.user_id, d.item_id, d.chars,
                        (SELECT substr(string_agg(c.content, '' ORDER BY c.n), ($3 - ($3 / $5) * $5 + 1)::int, $4::int)
                         FROM memory.detail_chunks c
                         WHERE c.user_id = d.user_id AND c.key = d.key
                           AND c.n BETWEEN $3 / $5 AND ($3 + $4 - 1) / $5) AS page
                 FROM memory.details d JOIN memory.items i ON i.user_id = d.user_id AND i.id = d.item_id
                 WHERE d.key = $1 AND ($2::text IS NULL OR d.user_id = $2) AND i.state = 'active'
                 LIMIT 2
             ), touched AS (
                 UPDATE memory.items i SET last_accessed_at = now(), access_count = access_count + 1
                 FROM d WHERE i.user_id = d.user_id AND i.id = d.item_id AND (SELECT count(*) FROM d) = 1
             )
             SELECT user_id, item_id::text, page, chars FROM d",
            None,
            &[
                key.into(),
                user.into(),
                offset.into(),
                limit.into(),
                (rules::CHUNK_CHARS as i64).into(),
            ],
        )?
        .map(|r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
                r.get::<i64>(4)?.unwrap_or(0),
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("reading a detail");
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
    JsonB(json!({ "content": page, "offset": offset, "next_offset": next, "total": total }))
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

/// The LLM's one-line description of an output, or `None` (not configured, or it failed: the
/// deterministic description is used and a NOTICE says why).
fn llm_description(command: &str, output: &str) -> Option<String> {
    let cfg = gucs::llm()?;
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
    match memory_providers::llm::chat(&cfg, system, &user, false) {
        Ok(a) => {
            let line = memory_core::summary::limit_words(&memory_core::text::normalize(&a), 20);
            (!line.is_empty()).then_some(line)
        }
        Err(e) => {
            pgrx::notice!("describing the output without the LLM: {e}");
            None
        }
    }
}

/// Seed 002's capture step: the output itself when it has at most `threshold_tokens` tokens,
/// else the output goes to detail memory and the answer is one line with its placeholder,
/// status and key lines.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_capture(
    command: Option<&str>,
    output: Option<&str>,
    threshold_tokens: default!(Option<i32>, 500),
    user_id: default!(Option<&str>, "NULL"),
    thread_id: default!(Option<&str>, "NULL"),
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
    let user = tenant::resolve(user_id);
    let (over, tokens) = over_threshold(output, threshold);
    if !over {
        return output.to_string();
    }
    let o = rules::outcome(output);
    let description =
        llm_description(command, output).unwrap_or_else(|| rules::capture_description(command, &o));
    let mut meta = json!({ "command": command, "status": o.status, "lines": o.lines });
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
        meta,
        base,
    );
    rules::capture_line(command, &s.placeholder, &o)
}

extension_sql_file!(
    "../../sql/detail.sql",
    name = "detail",
    requires = [ref_store]
);
