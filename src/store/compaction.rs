//! Compaction (docs/api.md "Recall memory and compaction"; docs/design.md "Compaction"):
//! `compact_thread` folds the older in-context messages of a thread into one summary message
//! at the head of the context, and `context_messages` lists the context in prompt order.
//!
//! Nothing is deleted: summarised messages only leave the context (`in_context = false`) and
//! stay in recall memory, found by conversation_search. A thread's row is locked for the
//! duration, so a message appended meanwhile waits and lands after the summary.

use crate::embed::write::for_write;
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, vector};
use memory_core::summary::{self, Turn};
use serde_json::{json, Value};

/// Characters of each message the LLM sees, and of the whole transcript: a compaction must fit
/// the summarising model's own context, and one huge tool output must not crowd out the rest.
const LLM_MESSAGE_CHARS: usize = 2000;
const LLM_TRANSCRIPT_CHARS: usize = 60_000;

struct Msg {
    id: String,
    seq: i64,
    role: String,
    content: String,
    is_summary: bool,
}

/// The summary text: the LLM's (Letta's summarising prompt, docs/design.md "Compaction") when configured and answering, else the
/// extractive one; at most 100 words either way.
fn summarise(previous: Option<&str>, turns: &[Turn]) -> (String, &'static str) {
    if let Some(cfg) = gucs::llm() {
        let t = summary::transcript(previous, turns, LLM_MESSAGE_CHARS, LLM_TRANSCRIPT_CHARS);
        match memory_providers::llm::chat(&cfg, summary::COMPACTION_PROMPT, &t, false) {
            Ok(a) if !a.trim().is_empty() => {
                return (
                    summary::limit_words(&memory_core::text::normalize(&a), summary::SUMMARY_WORDS),
                    "llm",
                )
            }
            Ok(_) => pgrx::notice!("summarising without the LLM: it answered nothing"),
            Err(e) => pgrx::notice!("summarising without the LLM: {e}"),
        }
    }
    (summary::compaction_extract(previous, turns), "extractive")
}

/// Summarises the thread's in-context messages older than the last `keep_last` into one summary
/// message and takes them out of the context. System messages that are not summaries (the
/// system prompt) stay; a previous summary is folded into the new one; a tool result is never
/// separated from the call before it. Returns `{summary, summarized, kept, method}`: `summary`
/// NULL and `summarized` 0 when there was nothing to fold; `kept` counts the messages left in
/// context besides the summary.
pub fn compact(thread: &str, keep: usize) -> Value {
    let user = lookup::owner(Owned::Thread, thread);
    spi::run(
        "SELECT 1 FROM memory.threads WHERE user_id = $1 AND thread_id = $2 FOR UPDATE",
        &[user.as_str().into(), thread.into()],
        "locking the thread",
    );
    let msgs: Vec<Msg> = spi::rows(
        include_str!("../../sql/queries/compaction_context.sql"),
        &[user.as_str().into(), thread.into()],
        "reading the context",
        |r| {
            Ok(Msg {
                id: r.get::<String>(1)?.unwrap_or_default(),
                seq: r.get::<i64>(2)?.unwrap_or(0),
                role: r.get::<String>(3)?.unwrap_or_default(),
                content: r.get::<String>(4)?.unwrap_or_default(),
                is_summary: r.get::<bool>(5)?.unwrap_or(false),
            })
        },
    );
    let previous: Vec<&Msg> = msgs.iter().filter(|m| m.is_summary).collect();
    let system_kept = msgs
        .iter()
        .filter(|m| m.role == "system" && !m.is_summary)
        .count();
    let conv: Vec<&Msg> = msgs
        .iter()
        .filter(|m| !m.is_summary && m.role != "system")
        .collect();
    let mut cut = conv.len().saturating_sub(keep);
    // A tool result belongs with the assistant call before it: both go, or both stay.
    while cut > 0 && cut < conv.len() && conv[cut].role == "tool" {
        cut += 1;
    }
    if cut == 0 {
        return json!({
            "summary": null, "summarized": 0, "kept": conv.len() + system_kept, "method": null
        });
    }
    let folded = &conv[..cut];
    let prev_text = previous
        .iter()
        .map(|m| strip_note(&m.content))
        .collect::<Vec<_>>()
        .join(" ");
    let turns: Vec<Turn> = folded
        .iter()
        .map(|m| Turn {
            label: summary::role_label(&m.role).into(),
            text: m.content.clone(),
        })
        .collect();
    let (text, method) = summarise(
        (!prev_text.trim().is_empty()).then_some(prev_text.as_str()),
        &turns,
    );
    // Whatever the summary says, it keeps every placeholder of what it folds.
    let sources: Vec<&str> = std::iter::once(prev_text.as_str())
        .chain(folded.iter().map(|m| m.content.as_str()))
        .collect();
    let text = summary::keep_placeholders(&text, &memory_core::detail::placeholders(&sources));
    let (first, last) = (folded[0].seq, folded[folded.len() - 1].seq);
    let content = format!("{}{text}", note(folded.len(), first, last));
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
        "UPDATE memory.messages SET in_context = false WHERE user_id = $1 AND id = ANY($2::uuid[])",
        &[user.as_str().into(), out.into()],
        "taking messages out of the context",
    );
    events::record(Event {
        thread: Some(thread),
        memory_id: Some(&id),
        ..Event::new(&user, Node::Context, "compact")
    });
    json!({
        "summary": text,
        "summarized": folded.len(),
        "kept": conv.len() - cut + system_kept,
        "method": method,
    })
}

/// The line that opens a summary message, so that a model reading its context knows what it is
/// and where the rest went.
fn note(n: usize, first: i64, last: i64) -> String {
    format!("Summary of {n} earlier messages (seq {first}-{last}; still searchable with conversation_search): ")
}

/// A summary message's text without its opening line (when it is folded into the next one).
fn strip_note(content: &str) -> &str {
    match content.find("conversation_search): ") {
        Some(p) if content.starts_with("Summary of ") => {
            &content[p + "conversation_search): ".len()..]
        }
        _ => content,
    }
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
);

/// context_messages: the thread's context in prompt order: system messages that are not
/// summaries (the system prompt), then the summary, then the rest by seq; within
/// `max_messages` / `max_tokens` when given (`memory_core::summary::context_cut` says what is
/// kept).
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
            ))
        },
    );
    if max_messages.is_none() && max_tokens.is_none() {
        return rows;
    }
    // The head: the system prompt and the summary, first in prompt order, always kept.
    let shape: Vec<(&str, i64, bool)> = rows
        .iter()
        .map(|r| (r.2.as_str(), i64::from(r.4), r.5 || r.2 == "system"))
        .collect();
    let (head, cut) = summary::context_cut(&shape, max_messages, max_tokens);
    rows.into_iter()
        .enumerate()
        .filter(|(i, _)| *i < head || *i >= cut)
        .map(|(_, r)| r)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn notes_round_trip() {
        let n = super::note(3, 1, 3);
        assert_eq!(
            super::strip_note(&format!("{n}We planned X.")),
            "We planned X."
        );
        assert_eq!(super::strip_note("plain"), "plain");
    }
}
