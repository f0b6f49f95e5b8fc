//! memory_changes (docs/api.md "Change feed"): what changed in the caller's memory, in the
//! feed's order, with a cursor. The work is in src/ops/changes.rs.

use crate::ops::changes as ops;
use pgrx::prelude::*;
use pgrx::JsonB;

/// `{changes: [{entity, id, op, revision, at}], cursor, channel, tags}`: the caller's changes
/// after `since` (a cursor an earlier call returned; NULL from the start of the feed), at most
/// `limit` (1-1000).
#[pg_extern(stable, parallel_restricted)]
fn memory_changes(
    since: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 100),
) -> JsonB {
    ops::read(since, limit)
}
