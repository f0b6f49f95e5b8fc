//! Extraction (docs/api.md "Extraction"): `memory_extract(thread_id)` runs now what the
//! background worker does on its own, for one thread. The work is in src/ops/extract.rs.

use crate::error::OrRaise;
use crate::ops::extract as ops;
use crate::pg::lookup::{self, Owned};
use crate::pg::owner::as_owner;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Extracts memories from the thread's messages past its watermark, now (with the LLM when
/// one is configured, so this call may wait for it: applications leave it to the worker).
/// `{batches, turns, created, updated, unchanged, superseded, rejected, capped, llm_calls,
/// tokens_in, tokens_out, failed, method, error, extracted_seq}`. P0002 for an unknown thread.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_extract(thread_id: Option<&str>) -> JsonB {
    let thread = validate::id("thread_id", thread_id).or_raise();
    let user = lookup::owner(Owned::Thread, thread);
    // The whole run as the extension's owner, as the worker runs it: its bookkeeping is the
    // owner's (src/ops/extract.rs), and Citus refuses a transaction in which two users write
    // to one tenant's shards (docs/citus.md). The tenant was checked just above, and every
    // statement of the run names it.
    JsonB(as_owner(|| ops::run_thread(&user, thread)))
}
