//! Scale-out on Citus (docs/citus.md): `memory_citus_distribute`, run once by the operator on
//! the coordinator; the work is in src/ops/citus.rs.

use crate::ops::citus as ops;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Shards every tenant table by `user_id` (colocated with memory.items), makes the model
/// registry a reference table and registers the active model. Idempotent: a second run only
/// distributes tables a newer release added. `{distributed, reference, model}`. 0A000 without
/// Citus or off the coordinator. Not executable by PUBLIC (sql/citus.sql).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_citus_distribute() -> JsonB {
    JsonB(ops::distribute())
}
