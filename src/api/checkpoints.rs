//! Checkpoints (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Checkpoints"): one JSON state per
//! tenant and thread, replaced by every save, for agent frameworks' checkpointers.
//!
//! The functions themselves are SQL (sql/checkpoints.sql): a state of megabytes goes from the
//! caller into the table without being parsed into Rust and back. Rust only checks the
//! arguments, with the same rules and SQLSTATEs as the rest of the API.

use crate::error::OrRaise;
use crate::pg::json::JsonText;
use crate::pg::tenant;
use memory_core::validate;
use pgrx::prelude::*;

/// The tenant a call acts for (`user_id`, which must be the current tenant when one is set).
#[pg_extern(stable, parallel_safe, schema = "memory")]
fn resolve_tenant(user_id: Option<&str>) -> String {
    tenant::resolve(user_id)
}

/// `thread_id` checked as an id (non-NULL, non-empty, at most 200 characters).
#[pg_extern(immutable, parallel_safe, schema = "memory")]
fn checkpoint_thread(thread_id: Option<&str>) -> String {
    validate::id("thread_id", thread_id).or_raise().to_string()
}

/// `data` of `bytes` bytes within `memory_ext.max_value_bytes` (22001 otherwise); returns
/// `bytes`. A checkpoint of 100 MB took a backend to ~1.5 GB.
#[pg_extern(stable, parallel_safe, schema = "memory")]
fn checkpoint_size(bytes: i64) -> i64 {
    crate::pg::limits::value_bytes("data", bytes.max(0) as usize);
    bytes
}

/// `value` within the shape every reader can read (nested at most 128 levels, numbers within a
/// 64-bit float: memory_core::validate::json_shape), or 22023 naming `arg`. For checkpoint_save,
/// whose value goes from SQL to its table without passing through Rust: a state that a reader
/// cannot read back (memory_export, a framework's loader) is refused when written.
#[pg_extern(immutable, parallel_safe, schema = "memory")]
fn check_json(arg: &str, value: Option<JsonText>) {
    if let Some(v) = value {
        if let Err(reason) = validate::json_shape(&v.0) {
            crate::error::raise(
                memory_core::SqlState::InvalidParameterValue,
                format!("invalid \"{arg}\": {reason}"),
                None,
            );
        }
    }
}
