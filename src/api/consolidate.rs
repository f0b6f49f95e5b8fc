//! memory_consolidate (docs/api.md "Lifecycle", docs/design.md "Consolidation"): the daily pass
//! that merges memories stating one fact twice and links the rest of the near pairs. The work
//! is in src/ops/consolidate.rs (the worker runs it too); the decisions that need no database
//! are in `memory_core::consolidate`.

use crate::error::OrRaise;
use crate::ops::consolidate as ops;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// The daily consolidation for one tenant (`user_id`, or the current tenant) or, with neither,
/// every tenant the caller may see. `max_pairs`: same-fact checks per tenant per day.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_consolidate(
    user_id: default!(Option<&str>, "NULL"),
    max_pairs: default!(Option<i32>, 50),
) -> JsonB {
    let max_pairs = *validate::required("max_pairs", max_pairs.as_ref()).or_raise();
    let max_pairs = validate::range("max_pairs", max_pairs as i64, 0, 10_000).or_raise();
    JsonB(ops::run(user_id, max_pairs))
}
