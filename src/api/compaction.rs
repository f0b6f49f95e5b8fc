//! Compaction (docs/api.md "Recall memory and compaction"; docs/design.md "Compaction"):
//! `compact_thread` folds the older in-context messages of a thread into one summary message
//! at the head of the context, and `context_messages` lists the context in prompt order. The
//! work is in src/ops/compaction.rs.

use crate::error::{raise, OrRaise};
use crate::ops::compaction as ops;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Folds in-context messages of the thread into one summary message at the head of the context
/// and takes them out of it: by default all but the newest `keep_last`; with `from_seq` /
/// `to_seq`, that range of messages; with `before_seq`, every message before it . `focus` steers the summary toward what matters for it. Pinned messages are never
/// folded. `{summary, summarized, kept, method, from_seq, to_seq, date_from, date_to, archived,
/// key_facts, evicted, focus}`.
#[pg_extern(volatile, parallel_unsafe)]
fn compact_thread(
    thread_id: Option<&str>,
    keep_last: default!(Option<i32>, 10),
    from_seq: default!(Option<i64>, "NULL"),
    to_seq: default!(Option<i64>, "NULL"),
    before_seq: default!(Option<i64>, "NULL"),
    focus: default!(Option<&str>, "NULL"),
) -> JsonB {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let keep = *validate::required("keep_last", keep_last.as_ref()).or_raise() as i64;
    let keep = validate::range("keep_last", keep, 0, 1_000_000).or_raise() as usize;
    let pick = match (from_seq, to_seq, before_seq) {
        (None, None, None) => ops::Pick::KeepLast(keep),
        (None, None, Some(b)) => ops::Pick::Before(b),
        (from, to, None) => {
            if let (Some(f), Some(t)) = (from, to) {
                if t < f {
                    raise(
                        SqlState::InvalidParameterValue,
                        format!("to_seq {t} is before from_seq {f}"),
                        None,
                    );
                }
            }
            ops::Pick::Range { from, to }
        }
        _ => raise(
            SqlState::InvalidParameterValue,
            "give before_seq, or from_seq and to_seq, not both",
            Some("before_seq N folds every message before N; from_seq/to_seq fold a range".into()),
        ),
    };
    let focus = focus.map(str::trim).filter(|f| !f.is_empty());
    if let Some(f) = focus {
        crate::pg::limits::query("focus", f);
    }
    JsonB(ops::compact(
        thread,
        pick,
        focus,
        crate::ops::refine::Llm::Later,
    ))
}

/// Sets the thread's context to exactly these messages (Letta's
/// `set_message_ids`): the others leave it, nothing is deleted. `{in_context, taken_out,
/// put_back}`.
#[pg_extern(volatile, parallel_unsafe)]
fn set_message_ids(thread_id: Option<&str>, message_ids: Option<Vec<Option<pgrx::Uuid>>>) -> JsonB {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let ids: Vec<String> = message_ids
        .unwrap_or_else(|| {
            raise(
                SqlState::NullValueNotAllowed,
                "message_ids must not be null",
                Some("an empty array empties the context".into()),
            )
        })
        .into_iter()
        .map(|u| {
            u.unwrap_or_else(|| {
                raise(
                    SqlState::NullValueNotAllowed,
                    "message_ids must not contain NULL",
                    None,
                )
            })
            .to_string()
        })
        .collect();
    crate::pg::limits::batch("message_ids", ids.len());
    JsonB(ops::set_ids(thread, &ids))
}

/// Pins a message into the thread's context (bringing it back when it had left), or unpins it
/// (`pinned` false): compaction never folds a pinned message and context_messages' caps always
/// keep it. `{id, seq, pinned, in_context}`.
#[pg_extern(volatile, parallel_unsafe)]
fn message_pin(
    thread_id: Option<&str>,
    message_id: Option<pgrx::Uuid>,
    pinned: default!(Option<bool>, true),
) -> JsonB {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let id = validate::required("message_id", message_id.as_ref())
        .or_raise()
        .to_string();
    let pinned = *validate::required("pinned", pinned.as_ref()).or_raise();
    JsonB(ops::pin(thread, &id, pinned))
}

/// The thread's context in prompt order: system messages that are not summaries (the system
/// prompt), then the summary, then the rest by seq, with what a chat request needs of each;
/// within `max_messages` and `max_tokens` when given (the head always, then the newest, never a
/// tool result without its call).
#[pg_extern(stable, parallel_safe)]
#[allow(clippy::type_complexity)]
fn context_messages(
    thread_id: Option<&str>,
    max_messages: default!(Option<i32>, "NULL"),
    max_tokens: default!(Option<i32>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(id, pgrx::Uuid),
        name!(seq, i64),
        name!(role, String),
        name!(content, String),
        name!(tokens, i32),
        name!(is_summary, bool),
        name!(tool_calls, Option<JsonB>),
        name!(tool_call_id, Option<String>),
        name!(name, Option<String>),
        name!(created_at, Option<pgrx::datum::TimestampWithTimeZone>),
        name!(pinned, bool),
    ),
> {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let max_messages = max_messages
        .map(|m| validate::range("max_messages", i64::from(m), 1, 1_000_000).or_raise() as usize);
    let max_tokens =
        max_tokens.map(|m| validate::range("max_tokens", i64::from(m), 1, 100_000_000).or_raise());
    TableIterator::new(ops::context(thread, max_messages, max_tokens))
}
