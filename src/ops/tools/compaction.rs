//! The compaction tools (memory_core::tools::compaction): summarize_conversation and
//! archive_old_messages through the compaction of compact_thread (src/ops/compaction.rs),
//! answered with what left the context and the summary.

use super::Cx;
use crate::ops::compaction;
use crate::ops::refine::Llm;
use crate::pg::{limits, spi};
use memory_core::render;
use memory_core::tools::compaction::Before;
use memory_core::tools::Call;
use serde_json::Value;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx { thread, .. } = *cx;
    Ok(match c {
        Call::Summarize {
            from,
            to,
            keep_last,
            focus,
        } => {
            let t = thread
                .ok_or("summarize_conversation needs a conversation: call it within a thread")?;
            if let Some(f) = &focus {
                limits::query("focus", f);
            }
            let pick = if from.is_some() || to.is_some() {
                compaction::Pick::Range { from, to }
            } else {
                compaction::Pick::KeepLast(keep_last as usize)
            };
            compacted(&compaction::compact(t, pick, focus.as_deref(), Llm::Later))
        }
        Call::Archive { before } => {
            let t = thread
                .ok_or("archive_old_messages needs a conversation: call it within a thread")?;
            let before = match before {
                Before::Turn(n) => n,
                Before::Quote(q) => {
                    limits::query("before_message", &q);
                    spi::one_opt::<i64>(
                        include_str!("../../../sql/queries/tools_quoted_message.sql"),
                        &[cx.user.into(), t.into(), q.as_str().into()],
                        "finding a quoted message",
                    )
                    .ok_or_else(|| {
                        format!(
                            "No message of this conversation contains \"{}\": quote its words \
                             exactly, or give before_turn.",
                            render::inline(&q)
                        )
                    })?
                }
            };
            compacted(&compaction::compact(
                t,
                compaction::Pick::Before(before),
                None,
                Llm::Later,
            ))
        }
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// A compaction as the model reads it: what left the context, what the summary at its top now
/// covers, the summary and its key facts (each on its line, memory_core::render).
fn compacted(r: &Value) -> String {
    let n = r["summarized"].as_i64().unwrap_or(0);
    if n == 0 {
        return "Nothing to summarise: no message in your context matches (pinned messages, the \
                system prompt and the newest you keep stay)."
            .into();
    }
    let (from, to) = (r["date_from"].as_str(), r["date_to"].as_str());
    let days = match (from, to) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a} to {b}"),
        _ => String::new(),
    };
    let mut out = format!(
        "Summarised {n} {} into the summary at the top of your context; they stay searchable \
         with conversation_search. The summary now covers messages {}-{} ({days}), {} in \
         all.\nSummary: {}",
        if n == 1 { "message" } else { "messages" },
        r["from_seq"],
        r["to_seq"],
        r["archived"],
        render::inline(r["summary"].as_str().unwrap_or_default())
    );
    let facts: Vec<String> = r["key_facts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|f| format!("- {}", render::inline(f)))
        .collect();
    if !facts.is_empty() {
        out.push_str(&format!("\nKey facts:\n{}", facts.join("\n")));
    }
    out
}
