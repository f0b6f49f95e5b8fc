//! Transaction-local hints for the audit triggers (sql/triggers.sql): `memory.reason`, which
//! event a change is when the row change alone cannot tell (a soft delete by TTL, by the user
//! or by a merge looks the same), and `memory.meta`, extra JSON for the events.

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

/// [`with_reason`], with `meta` (a JSON object) merged into the events' meta as well.
pub fn with_reason_and_meta<R>(reason: &str, meta: &str, f: impl FnOnce() -> R) -> R {
    set("memory.meta", meta);
    let r = with_reason(reason, f);
    set("memory.meta", "");
    r
}

fn set(name: &str, value: &str) {
    Spi::run_with_args(
        "SELECT set_config($1, $2, true)",
        &[name.into(), value.into()],
    )
    .spi("setting an audit hint");
}
