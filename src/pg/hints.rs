//! Hints for the audit triggers (sql/triggers.sql): `reason`, which event a change is when the
//! row change alone cannot tell (a soft delete by TTL, by the user or by a merge looks the
//! same), and `meta`, extra JSON for the events.
//!
//! # Why not settings
//! They used to be transaction-local settings (`memory.reason`, `memory.meta`), which any
//! session can set: `SET memory.reason = 'purge'` before a plain `DELETE` wrote a PURGE
//! history row with injected metadata and no revision. Now they live in this backend's memory,
//! set only by the extension's own functions around the statement they label, and the triggers
//! read them through `memory._hint(name)`; plain SQL cannot set them.

use pgrx::prelude::*;
use pgrx::PgTryBuilder;
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;

#[derive(Default)]
struct Hints {
    reason: Option<String>,
    meta: Option<String>,
}

thread_local! {
    static HINTS: RefCell<Hints> = RefCell::new(Hints::default());
}

/// Runs `f` with the `reason` hint set to `reason`, and clears it afterwards on every path (an
/// error inside `f` included), so that later statements are not mislabelled.
pub fn with_reason<R>(reason: &str, f: impl FnOnce() -> R) -> R {
    with(Some(reason), None, f)
}

/// [`with_reason`], with `meta` (a JSON object) merged into the events' meta as well.
pub fn with_reason_and_meta<R>(reason: &str, meta: &str, f: impl FnOnce() -> R) -> R {
    with(Some(reason), Some(meta), f)
}

fn with<R>(reason: Option<&str>, meta: Option<&str>, f: impl FnOnce() -> R) -> R {
    let saved = HINTS.with_borrow_mut(|h| {
        std::mem::replace(
            h,
            Hints {
                reason: reason.map(str::to_owned),
                meta: meta.map(str::to_owned),
            },
        )
    });
    let saved = RefCell::new(Some(saved));
    PgTryBuilder::new(AssertUnwindSafe(f))
        .finally(|| {
            if let Some(s) = saved.take() {
                HINTS.set(s);
            }
        })
        .execute()
}

/// `memory._hint(name)`: the hint `name` ('reason' or 'meta') the extension set for the
/// statement running now, or NULL.
#[pg_extern(name = "_hint", schema = "memory", stable, parallel_restricted)]
fn hint(name: &str) -> Option<String> {
    HINTS.with_borrow(|h| match name {
        "reason" => h.reason.clone(),
        "meta" => h.meta.clone(),
        _ => None,
    })
}
