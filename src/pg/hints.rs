//! Transaction-local hints for the audit triggers (sql/triggers.sql, "memory.reason"): which
//! event a change is, when the row change alone cannot tell (a soft delete by TTL, by the user
//! or by a merge looks the same).

use crate::error::SpiOk;
use pgrx::prelude::*;

/// Runs `f` with `memory.reason` set to `reason`, then clears it so that later statements of
/// the caller's transaction are not mislabelled. (On error the transaction aborts and the
/// setting goes with it.)
pub fn with_reason<R>(reason: &str, f: impl FnOnce() -> R) -> R {
    set("memory.reason", reason);
    let r = f();
    set("memory.reason", "");
    r
}

fn set(name: &str, value: &str) {
    Spi::run_with_args(
        "SELECT set_config($1, $2, true)",
        &[name.into(), value.into()],
    )
    .spi("setting an audit hint");
}
