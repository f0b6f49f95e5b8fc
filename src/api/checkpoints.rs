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

/// `thread_id` checked as an id (non-NULL, non-empty, at most 200 characters) and as a name
/// screening refuses (0.13.0: src/ops/screen.rs `identifier`). Declared immutable as before:
/// the screening policy is the operator's setting, and the checkpoint functions call this with
/// their arguments, never at plan time.
#[pg_extern(immutable, parallel_safe, schema = "memory")]
fn checkpoint_thread(thread_id: Option<&str>) -> String {
    let id = validate::id("thread_id", thread_id).or_raise();
    crate::ops::screen::identifier("thread_id", id);
    id.to_string()
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

/// `value` (checkpoint_save's state, checkpoint_put's checkpoint and metadata) with every string
/// screened as a message's text is (src/ops/screen.rs), or NULL when nothing in it needs to
/// be: a state of megabytes that holds nothing to screen is looked at as text, not parsed.
#[pg_extern(volatile, parallel_unsafe, schema = "memory")]
fn screen_checkpoint(value: Option<JsonText>) -> Option<pgrx::JsonB> {
    let v = value?;
    if !crate::ops::screen::holds_findings(&v.0) {
        return None;
    }
    let parsed: serde_json::Value = serde_json::from_str(&v.0).ok()?;
    Some(pgrx::JsonB(crate::ops::screen::json(
        "checkpoint",
        None,
        &parsed,
    )))
}

/// A checkpoint blob of LangGraph type `kind` with its strings screened (memory_core::blob:
/// `json` and `msgpack`; other types are kept as written), or NULL when it is kept as it is.
#[pg_extern(volatile, parallel_unsafe, schema = "memory")]
fn screen_blob(kind: Option<&str>, blob: Option<&[u8]>) -> Option<Vec<u8>> {
    let (kind, blob) = (kind?, blob?);
    // screen::text returns a clean string as it was: one scan per string.
    memory_core::blob::screened(kind, blob, &mut |s| {
        crate::ops::screen::text("checkpoint", None, s)
    })
}
