//! Compaction (docs/api.md "Recall memory and compaction"; docs/design.md "Compaction"):
//! `compact_thread` folds the older in-context messages of a thread into one summary message
//! at the head of the context, and `context_messages` lists the context in prompt order.
//!
//! Nothing is deleted: summarised messages only leave the context (`in_context = false`) and
//! stay in recall memory, found by conversation_search. A thread's row is locked for the
//! duration, so a message appended meanwhile waits and lands after the summary.

use crate::embed::write::for_write;
use crate::ops::refine::{self, Llm, Refined};
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, vector};
use memory_core::summary::{self, Covered, Turn};
use memory_providers::llm::LlmConfig;
use serde_json::{json, Value};

/// Characters of each message the LLM sees, and of the whole transcript: a compaction must fit
/// the summarising model's own context, and one huge tool output must not crowd out the rest.
const LLM_MESSAGE_CHARS: usize = 2000;
const LLM_TRANSCRIPT_CHARS: usize = 60_000;
/// The summary's answer cap: 100 words are about 130 tokens; a model that rambles is cut (and
/// the cut summary limited to 100 words like any other), not waited for.
const SUMMARY_MAX_TOKENS: u32 = 200;

struct Msg {
    id: String,
    seq: i64,
    role: String,
    content: String,
    is_summary: bool,
    pinned: bool,
    /// The day it was sent, `YYYY-MM-DD` (UTC).
    day: String,
    /// A summary's structure (`metadata.summary`), for the next one that folds it.
    covered: Value,
}

/// Which messages a compaction folds: all but the newest `keep_last` (the
/// default), a range of `seq`, or everything before a message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pick {
    KeepLast(usize),
    Range { from: Option<i64>, to: Option<i64> },
    Before(i64),
}

/// The LLM's summary (Letta's summarising prompt, docs/design.md "Compaction"), at most 100
/// words; `focus` steers it (the tool's `focus`).
fn llm_summary(
    cfg: &memory_providers::llm::LlmConfig,
    previous: Option<&str>,
    turns: &[Turn],
    focus: Option<&str>,
) -> Result<String, String> {
    let mut t = summary::transcript(previous, turns, LLM_MESSAGE_CHARS, LLM_TRANSCRIPT_CHARS);
    if let Some(f) = focus {
        t = format!("Focus the summary on what matters for: {f}\n\n{t}");
    }
    let a = memory_providers::llm::chat_full(
        cfg,
        summary::COMPACTION_PROMPT,
        &t,
        false,
        Some(SUMMARY_MAX_TOKENS),
    )
    .map_err(|e| e.to_string())?
    .text;
    let text = summary::limit_words(&memory_core::text::normalize(&a), summary::SUMMARY_WORDS);
    if text.is_empty() {
        return Err("the LLM answered nothing".into());
    }
    Ok(text)
}

/// The conversation messages `pick` folds, as indexes into `conv` (in-context, neither system
/// nor summary, by seq): a tool result goes with the call before it, both or neither; a pinned
/// message stays, and so does the call of a pinned tool result.
fn folded(conv: &[&Msg], pick: Pick) -> Vec<usize> {
    let roles: Vec<(&str, i64, bool)> = conv
        .iter()
        .map(|m| (m.role.as_str(), m.seq, m.pinned))
        .collect();
    fold_indexes(&roles, pick)
}

/// [`folded`] over `(role, seq, pinned)` rows.
fn fold_indexes(conv: &[(&str, i64, bool)], pick: Pick) -> Vec<usize> {
    let n = conv.len();
    let mut fold: Vec<bool> = match pick {
        Pick::KeepLast(keep) => {
            let cut = n.saturating_sub(keep);
            (0..n).map(|i| i < cut).collect()
        }
        Pick::Range { from, to } => conv
            .iter()
            .map(|m| from.is_none_or(|f| m.1 >= f) && to.is_none_or(|t| m.1 <= t))
            .collect(),
        Pick::Before(before) => conv.iter().map(|m| m.1 < before).collect(),
    };
    // Tool results after a folded call go with it; a folded result brings its call.
    for i in 1..n {
        if fold[i - 1] && conv[i].0 == "tool" {
            fold[i] = true;
        }
    }
    for i in (1..n).rev() {
        if fold[i] && conv[i].0 == "tool" {
            fold[i - 1] = true;
        }
    }
    // What is pinned stays, with the call of a pinned result and the results between.
    for i in 0..n {
        if conv[i].2 {
            fold[i] = false;
            let mut j = i;
            while conv[j].0 == "tool" && j > 0 {
                j -= 1;
                fold[j] = false;
            }
        }
    }
    // A result whose call stays, stays.
    for i in 1..n {
        if !fold[i - 1] && conv[i].0 == "tool" {
            fold[i] = false;
        }
    }
    (0..n).filter(|&i| fold[i]).collect()
}

/// Folds in-context messages of the thread into one summary message at the head of the
/// context and takes them out of it (nothing is deleted): those `pick` selects, never a pinned
/// one (message_pin), never the system prompt. A previous summary is folded into the new one
/// and evicted to archival memory (out of the context into archival memory), where archival_search
/// finds it. The summary says what it covers: the first and last message
/// folded, their days, how many messages have left the context under it, and its key facts.
/// Returns `{summary, summarized, kept, method, from_seq, to_seq, date_from, date_to,
/// archived, key_facts, evicted, focus}`; `summary` NULL and `summarized` 0 when there was
/// nothing to fold.
pub fn compact(thread: &str, pick: Pick, focus: Option<&str>, llm: Llm) -> Value {
    let user = lookup::owner(Owned::Thread, thread);
    let agent = spi::one_opt::<String>(
        "SELECT agent_id FROM memory.threads WHERE user_id = $1 AND thread_id = $2 FOR UPDATE",
        &[user.as_str().into(), thread.into()],
        "locking the thread",
    );
    let msgs = in_context(&user, thread);
    let previous: Vec<&Msg> = msgs.iter().filter(|m| m.is_summary).collect();
    let system_kept = msgs
        .iter()
        .filter(|m| m.role == "system" && !m.is_summary)
        .count();
    let conv: Vec<&Msg> = msgs
        .iter()
        .filter(|m| !m.is_summary && m.role != "system")
        .collect();
    let picked = folded(&conv, pick);
    if picked.is_empty() {
        return json!({
            "summary": null, "summarized": 0, "kept": conv.len() + system_kept, "method": null,
            "focus": focus
        });
    }
    let folded: Vec<&Msg> = picked.iter().map(|&i| conv[i]).collect();
    let prev_text = previous
        .iter()
        .map(|m| summary::summary_prose(&m.content))
        .collect::<Vec<_>>()
        .join(" ");
    let turns: Vec<Turn> = folded
        .iter()
        .map(|m| Turn {
            label: summary::role_label(&m.role).into(),
            text: m.content.clone(),
        })
        .collect();
    let previous_text = (!prev_text.trim().is_empty()).then_some(prev_text.as_str());
    let (text, method, pending) = refine::write_with(
        llm,
        "summarising",
        |cfg| llm_summary(cfg, previous_text, &turns, focus),
        || summary::compaction_extract(previous_text, &turns, focus),
    );
    // Whatever the summary says, it keeps every placeholder of what it folds.
    let sources: Vec<&str> = std::iter::once(prev_text.as_str())
        .chain(folded.iter().map(|m| m.content.as_str()))
        .collect();
    let text = summary::keep_placeholders(&text, &memory_core::detail::placeholders(&sources));
    // What it covers: the folded messages and what the previous summaries covered.
    let (covered, facts) = coverage(&folded, &previous);
    let facts = summary::key_facts(&facts, &turns, focus, &text);
    let content = summary::summary_message(&covered, &text, &facts);
    let mut structure = json!({
        "from_seq": covered.from_seq, "to_seq": covered.to_seq,
        "date_from": covered.date_from, "date_to": covered.date_to,
        "archived": covered.archived, "key_facts": facts, "focus": focus, "method": method,
    });
    if pending {
        structure["pending"] = json!("llm");
    }
    let embedding = for_write(&content);
    let (vector, model) = embedding.columns();
    let id = spi::one_opt::<String>(
        &include_str!("../../sql/queries/compaction_summary.sql")
            .replace("{vector}", &vector::unsized_ty()),
        &[
            user.as_str().into(),
            thread.into(),
            content.as_str().into(),
            vector.into(),
            model.into(),
            pgrx::JsonB(json!({ "summary": structure })).into(),
        ],
        "inserting the summary",
    )
    .unwrap_or_default();
    embedding.record(&user, "message", &id);
    let out: Vec<String> = folded
        .iter()
        .map(|m| m.id.clone())
        .chain(previous.iter().map(|m| m.id.clone()))
        .collect();
    spi::run(
        // `NOT pinned` as well: a pin never leaves the context, whatever a fold picked.
        "UPDATE memory.messages SET in_context = false WHERE user_id = $1 AND id = ANY($2::uuid[]) AND NOT pinned",
        &[user.as_str().into(), out.into()],
        "taking messages out of the context",
    );
    // The summaries the new one covers leave the context for archival memory.
    let evicted: Vec<Value> = previous
        .iter()
        .filter_map(|p| evict(&user, thread, agent.as_deref(), p))
        .collect();
    events::record(Event {
        thread: Some(thread),
        memory_id: Some(&id),
        ..Event::new(&user, Node::Context, "compact")
    });
    json!({
        "summary": text,
        "pending": pending,
        "summarized": folded.len(),
        "kept": conv.len() - folded.len() + system_kept,
        "method": method,
        "from_seq": covered.from_seq,
        "to_seq": covered.to_seq,
        "date_from": covered.date_from,
        "date_to": covered.date_to,
        "archived": covered.archived,
        "key_facts": facts,
        "evicted": evicted,
        "focus": focus,
    })
}

/// The thread's messages in the context, in order, with what each summary covers.
fn in_context(user: &str, thread: &str) -> Vec<Msg> {
    spi::rows(
        include_str!("../../sql/queries/compaction_context.sql"),
        &[user.into(), thread.into()],
        "reading the context",
        |r| {
            Ok(Msg {
                id: r.get::<String>(1)?.unwrap_or_default(),
                seq: r.get::<i64>(2)?.unwrap_or(0),
                role: r.get::<String>(3)?.unwrap_or_default(),
                content: r.get::<String>(4)?.unwrap_or_default(),
                is_summary: r.get::<bool>(5)?.unwrap_or(false),
                pinned: r.get::<bool>(6)?.unwrap_or(false),
                day: r.get::<String>(7)?.unwrap_or_default(),
                covered: r
                    .get::<crate::pg::json::JsonText>(8)?
                    .map(|j| j.value())
                    .unwrap_or(Value::Null),
            })
        },
    )
}

/// What a new summary covers: the folded messages (in order) and everything the previous
/// summaries covered (seq range, days, how many messages left the context), and the key facts
/// the previous summaries kept.
fn coverage(folded: &[&Msg], previous: &[&Msg]) -> (Covered, Vec<String>) {
    let mut covered = Covered {
        from_seq: folded[0].seq,
        to_seq: folded[folded.len() - 1].seq,
        date_from: folded[0].day.clone(),
        date_to: folded[folded.len() - 1].day.clone(),
        archived: folded.len() as i64,
    };
    let mut facts: Vec<String> = vec![];
    for p in previous {
        let c = &p.covered;
        if let (Some(f), Some(t)) = (c["from_seq"].as_i64(), c["to_seq"].as_i64()) {
            covered.from_seq = covered.from_seq.min(f);
            covered.to_seq = covered.to_seq.max(t);
        }
        if let Some(d) = c["date_from"]
            .as_str()
            .filter(|d| *d < covered.date_from.as_str())
        {
            covered.date_from = d.to_string();
        }
        if let Some(d) = c["date_to"]
            .as_str()
            .filter(|d| *d > covered.date_to.as_str())
        {
            covered.date_to = d.to_string();
        }
        covered.archived += c["archived"].as_i64().unwrap_or(0);
        facts.extend(
            c["key_facts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_string)),
        );
    }
    (covered, facts)
}

/// An older summary, folded into a newer one, as an archival memory of the thread (tag
/// `conversation_summary`, dated by the last day it covers): found again by archival_search
/// and memory_query after it leaves the context. Its id, or `None` when it said nothing.
fn evict(user: &str, thread: &str, agent: Option<&str>, p: &Msg) -> Option<Value> {
    let prose = memory_core::text::normalize(summary::summary_prose(&p.content));
    if prose.is_empty() {
        return None;
    }
    let c = &p.covered;
    let mut req = json!({
        "user_id": user, "text": prose, "kind": "archival", "thread_id": thread,
        "tags": ["conversation_summary"],
        "metadata": {"summary_of": {"message_id": p.id, "from_seq": c["from_seq"],
                                     "to_seq": c["to_seq"], "date_from": c["date_from"],
                                     "date_to": c["date_to"], "archived": c["archived"]}},
    });
    if let Some(a) = agent {
        req["agent_id"] = json!(a);
    }
    if let Some(d) = c["date_to"].as_str() {
        req["happened_at"] = json!(d);
    }
    let r = crate::ops::write::write_json(&req);
    r.get("id").cloned()
}

/// A message of the context: (id, seq, role, content, tokens, is_summary).
pub type ContextRow = (
    pgrx::Uuid,
    i64,
    String,
    String,
    i32,
    bool,
    Option<pgrx::JsonB>,
    Option<String>,
    Option<String>,
    Option<pgrx::datum::TimestampWithTimeZone>,
    bool,
);

/// context_messages: the thread's context in prompt order: system messages that are not
/// summaries (the system prompt), then the summary, then the rest by seq; within
/// `max_messages` / `max_tokens` when given (`memory_core::summary::context_keep` says what is
/// kept: pinned messages always).
pub fn context(
    thread: &str,
    max_messages: Option<usize>,
    max_tokens: Option<i64>,
) -> Vec<ContextRow> {
    let user = lookup::owner(Owned::Thread, thread);
    let rows: Vec<ContextRow> = spi::rows(
        include_str!("../../sql/queries/compaction_context_order.sql"),
        &[user.as_str().into(), thread.into()],
        "reading the context",
        |r| {
            Ok((
                r.get::<pgrx::Uuid>(1)?
                    .unwrap_or(pgrx::Uuid::from_bytes([0; 16])),
                r.get::<i64>(2)?.unwrap_or(0),
                r.get::<String>(3)?.unwrap_or_default(),
                r.get::<String>(4)?.unwrap_or_default(),
                r.get::<i32>(5)?.unwrap_or(0),
                r.get::<bool>(6)?.unwrap_or(false),
                r.get::<crate::pg::json::JsonText>(7)?
                    .map(|j| pgrx::JsonB(j.value())),
                r.get::<String>(8)?,
                r.get::<String>(9)?,
                r.get::<pgrx::datum::TimestampWithTimeZone>(10)?,
                r.get::<bool>(11)?.unwrap_or(false),
            ))
        },
    );
    if max_messages.is_none() && max_tokens.is_none() {
        return rows;
    }
    // The head (the system prompt and the summary, first in prompt order) and pinned messages
    // are always kept.
    let shape: Vec<(&str, i64, bool, bool)> = rows
        .iter()
        .map(|r| (r.2.as_str(), i64::from(r.4), r.5 || r.2 == "system", r.10))
        .collect();
    let keep = summary::context_keep(&shape, max_messages, max_tokens);
    rows.into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(r, _)| r)
        .collect()
}

/// set_message_ids (Letta's name): the thread's context becomes exactly
/// `ids`, whatever compaction did; the others leave it, nothing is deleted. A message taken out
/// is unpinned (the caller said what stays). Every id must be one of the thread's messages
/// (P0002 names the first that is not). `{in_context, taken_out, put_back}`.
pub fn set_ids(thread: &str, ids: &[String]) -> Value {
    let user = lookup::owner(Owned::Thread, thread);
    spi::run(
        "SELECT 1 FROM memory.threads WHERE user_id = $1 AND thread_id = $2 FOR UPDATE",
        &[user.as_str().into(), thread.into()],
        "locking the thread",
    );
    if let Some(missing) = spi::one_opt::<String>(
        include_str!("../../sql/queries/compaction_missing_message.sql"),
        &[user.as_str().into(), thread.into(), ids.to_vec().into()],
        "checking message ids",
    ) {
        crate::error::raise(
            memory_core::SqlState::NoDataFound,
            format!("message \"{missing}\" is not in thread \"{thread}\""),
            None,
        );
    }
    let (taken_out, put_back, in_context) = spi::row(
        include_str!("../../sql/queries/compaction_set_ids.sql"),
        &[user.as_str().into(), thread.into(), ids.to_vec().into()],
        "setting the context",
        |r| {
            Ok((
                r.get::<i64>(1)?.unwrap_or(0),
                r.get::<i64>(2)?.unwrap_or(0),
                r.get::<i64>(3)?.unwrap_or(0),
            ))
        },
    )
    .unwrap_or((0, 0, 0));
    events::record(Event {
        thread: Some(thread),
        ..Event::new(&user, Node::Context, "set_message_ids")
    });
    json!({"in_context": in_context, "taken_out": taken_out, "put_back": put_back})
}

/// message_pin: pins a message of the thread into its context (and brings it back when it had
/// left), or unpins it (it stays in context until a compaction folds it). `{id, seq, pinned,
/// in_context}`; P0002 when the thread has no such message.
///
/// # Why the thread's lock
/// A compaction locks the thread, reads its context, then folds what it picked. A pin that
/// committed between that read and the fold was folded out all the same (12 workers pinning
/// and compacting one thread: 9-10 acknowledged pins lost a round). Taking the same lock, a pin
/// waits for a compaction under way and the next one reads it.
pub fn pin(thread: &str, id: &str, pinned: bool) -> Value {
    let user = lookup::owner(Owned::Thread, thread);
    spi::run(
        "SELECT 1 FROM memory.threads WHERE user_id = $1 AND thread_id = $2 FOR UPDATE",
        &[user.as_str().into(), thread.into()],
        "locking the thread",
    );
    let row = spi::row(
        include_str!("../../sql/queries/compaction_pin.sql"),
        &[
            user.as_str().into(),
            thread.into(),
            id.into(),
            pinned.into(),
        ],
        "pinning a message",
        |r| {
            Ok(json!({
                "id": r.get::<String>(1)?,
                "seq": r.get::<i64>(2)?,
                "pinned": r.get::<bool>(3)?,
                "in_context": r.get::<bool>(4)?,
            }))
        },
    );
    let Some(out) = row else {
        crate::error::raise(
            memory_core::SqlState::NoDataFound,
            format!("message \"{id}\" is not in thread \"{thread}\""),
            None,
        );
    };
    events::record(Event {
        thread: Some(thread),
        ..Event::new(&user, Node::Context, if pinned { "pin" } else { "unpin" })
    });
    out
}

/// The model's summary in place of the extractive one an application's compaction wrote
/// (`Llm::Later`): the covered range's messages summarised, the first line and the key facts
/// kept, the placeholders kept, the embedding redone. Conditional on the mark, under the row's
/// lock: a worker killed after the call and before the commit asks again, and only one answer
/// is ever written. A summary folded into a newer one before it was refined keeps its text (the
/// newer one was written from it).
pub fn refine(cfg: &LlmConfig, user: &str, id: &str) -> Refined {
    let Some((thread, mut structure, in_context)) = spi::row(
        include_str!("../../sql/queries/refine_summary_read.sql"),
        &[user.into(), id.into()],
        "reading a pending summary",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<crate::pg::json::JsonText>(2)?
                    .map(|j| j.value())
                    .unwrap_or(Value::Null),
                r.get::<bool>(3)?.unwrap_or(false),
            ))
        },
    ) else {
        return Refined::Gone;
    };
    let settle = |structure: &Value,
                  content: Option<(&str, &crate::embed::write::WriteEmbedding)>| {
        let (vector, model) = match content {
            Some((_, e)) => e.columns(),
            None => (None, None),
        };
        spi::run(
            &include_str!("../../sql/queries/refine_summary_write.sql")
                .replace("{vector}", &vector::unsized_ty()),
            &[
                user.into(),
                id.into(),
                content.map(|(c, _)| c).into(),
                vector.into(),
                model.into(),
                pgrx::JsonB(structure.clone()).into(),
            ],
            "refining a summary",
        );
    };
    if !in_context {
        if let Some(o) = structure.as_object_mut() {
            o.remove("pending");
        }
        settle(&structure, None);
        return Refined::Kept(None);
    }
    let covered = Covered {
        from_seq: structure["from_seq"].as_i64().unwrap_or(0),
        to_seq: structure["to_seq"].as_i64().unwrap_or(0),
        date_from: structure["date_from"].as_str().unwrap_or_default().into(),
        date_to: structure["date_to"].as_str().unwrap_or_default().into(),
        archived: structure["archived"].as_i64().unwrap_or(0),
    };
    let turns: Vec<Turn> = spi::rows(
        include_str!("../../sql/queries/refine_summary_turns.sql"),
        &[
            user.into(),
            thread.as_str().into(),
            covered.from_seq.into(),
            covered.to_seq.into(),
        ],
        "reading what a summary covers",
        |r| {
            Ok(Turn {
                label: summary::role_label(&r.get::<String>(1)?.unwrap_or_default()).into(),
                text: r.get::<String>(2)?.unwrap_or_default(),
            })
        },
    );
    let focus = structure["focus"].as_str().map(str::to_string);
    match llm_summary(cfg, None, &turns, focus.as_deref())
        .and_then(|t| refine::screened("message", user, &t))
    {
        Ok(text) => {
            let sources: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
            let text =
                summary::keep_placeholders(&text, &memory_core::detail::placeholders(&sources));
            let facts: Vec<String> = structure["key_facts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect();
            let content = summary::summary_message(&covered, &text, &facts);
            let embedding = for_write(&content);
            refine::done(&mut structure, "method");
            settle(&structure, Some((&content, &embedding)));
            embedding.record(user, "message", id);
            refine::event(user, Some(&thread), Some(id), true);
            Refined::Done
        }
        Err(e) => {
            let outcome = refine::failed(&mut structure, e);
            settle(&structure, None);
            refine::event(user, Some(&thread), Some(id), false);
            outcome
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{fold_indexes, Pick};

    #[test]
    fn a_pick_folds_whole_tool_calls_and_never_a_pinned_message() {
        let conv = [
            ("user", 1, false),
            ("assistant", 2, false),
            ("tool", 3, false),
            ("user", 4, true),
            ("assistant", 5, false),
            ("tool", 6, true),
            ("user", 7, false),
        ];
        assert_eq!(fold_indexes(&conv, Pick::KeepLast(2)), vec![0, 1, 2]);
        // The range ends inside a tool call: its result comes too.
        assert_eq!(
            fold_indexes(
                &conv,
                Pick::Range {
                    from: Some(2),
                    to: Some(2)
                }
            ),
            vec![1, 2]
        );
        // It starts at a result: its call comes too.
        assert_eq!(
            fold_indexes(
                &conv,
                Pick::Range {
                    from: Some(3),
                    to: None
                }
            ),
            vec![1, 2, 6]
        );
        assert_eq!(fold_indexes(&conv, Pick::Before(5)), vec![0, 1, 2]);
        assert!(fold_indexes(&conv, Pick::Before(1)).is_empty());
    }
}
