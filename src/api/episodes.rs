//! Write-after-run episodes (docs/design.md "Episodes"): `episode_write` summarises a run's
//! messages into a memory file under `episodes/YYYY-MM-DD/` and indexes it as an episodic
//! memory. The work is in src/ops/episodes.rs.

use crate::error::OrRaise;
use crate::ops::episodes as ops;
use crate::ops::idempotency;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// Summarises the run's messages into an episode file and an episodic memory. Returns `{path,
/// memory_id, event, from_seq, to_seq, messages, method, content}`. P0002 when the thread is
/// unknown or has no message since its last episode.
#[pg_extern(volatile, parallel_unsafe)]
fn episode_write(
    user_id: Option<&str>,
    thread_id: Option<&str>,
    run_id: default!(Option<&str>, "NULL"),
    idempotency_key: default!(Option<&str>, "NULL"),
) -> JsonB {
    let key = idempotency::of_call("episode_write", idempotency_key, || {
        vec![
            ("user_id", json!(user_id)),
            ("thread_id", json!(thread_id)),
            ("run_id", json!(run_id)),
        ]
    });
    let thread = validate::id("thread_id", thread_id).or_raise();
    let run = validate::optional_id("run_id", run_id).or_raise();
    JsonB(ops::write(user_id, thread, run, key.as_ref()))
}

/// Ends a run: records the request and returns at once; the background worker writes the
/// episode and, when the context is over `context_window` × 0.8, compacts the thread
/// (docs/api.md "Episodes"). `{thread_id, run_id, context_window, requested_at}`. P0002 for
/// an unknown thread.
#[pg_extern(volatile, parallel_unsafe)]
fn run_end(
    thread_id: Option<&str>,
    run_id: default!(Option<&str>, "NULL"),
    context_window: default!(Option<i32>, "NULL"),
    idempotency_key: default!(Option<&str>, "NULL"),
) -> JsonB {
    let key = idempotency::of_call("run_end", idempotency_key, || {
        vec![
            ("thread_id", json!(thread_id)),
            ("run_id", json!(run_id)),
            ("context_window", json!(context_window)),
        ]
    });
    let thread = validate::id("thread_id", thread_id).or_raise();
    let run = validate::optional_id("run_id", run_id).or_raise();
    let window = context_window
        .map(|w| validate::range("context_window", i64::from(w), 1, 100_000_000).or_raise() as i32);
    JsonB(ops::end_run(thread, run, window, key.as_ref()))
}

/// Rolls the tenant's project episodes up now (the worker does it weekly): for each project
/// (or `project`) with episodes since its last roll-up, `projects/<project>/summary.md` lists
/// them and keeps what earlier roll-ups said. `{"projects": [{user_id, project, path,
/// episodes}]}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_rollup(project: default!(Option<&str>, "NULL")) -> JsonB {
    let user = crate::pg::tenant::resolve(None);
    JsonB(serde_json::json!({ "projects": ops::rollup(Some(&user), project, true) }))
}
