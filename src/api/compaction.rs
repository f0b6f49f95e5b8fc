//! Compaction (docs/api.md "Recall memory and compaction"; docs/design.md "Compaction"):
//! `compact_thread` folds the older in-context messages of a thread into one summary message
//! at the head of the context, and `context_messages` lists the context in prompt order. The
//! work is in src/store/compaction.rs.

use crate::error::OrRaise;
use crate::store::compaction as store;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Summarises the thread's in-context messages older than the last `keep_last` into one summary
/// message and takes them out of the context; `{summary, summarized, kept, method}`.
#[pg_extern(volatile, parallel_unsafe)]
fn compact_thread(thread_id: Option<&str>, keep_last: default!(Option<i32>, 10)) -> JsonB {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let keep = *validate::required("keep_last", keep_last.as_ref()).or_raise() as i64;
    let keep = validate::range("keep_last", keep, 0, 1_000_000).or_raise() as usize;
    JsonB(store::compact(thread, keep))
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
    ),
> {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let max_messages = max_messages
        .map(|m| validate::range("max_messages", i64::from(m), 1, 1_000_000).or_raise() as usize);
    let max_tokens =
        max_tokens.map(|m| validate::range("max_tokens", i64::from(m), 1, 100_000_000).or_raise());
    TableIterator::new(store::context(thread, max_messages, max_tokens))
}
