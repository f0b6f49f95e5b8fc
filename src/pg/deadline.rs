//! A time limit on one piece of work inside a statement (memory_file_grep's regular
//! expressions, `memory_ext.regex_timeout_ms`).
//!
//! # Why a timer of our own
//! Postgres's regular expressions can take exponential time on a hostile pattern (one ran past
//! 30 s), and `statement_timeout` is the caller's to set, often not at all. The regex engine
//! checks for query cancel as it works, so a timer that raises the cancel flag, as
//! `statement_timeout` does, stops it; we then report which limit it hit.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{PgLogLevel, PgSqlErrorCode, PgTryBuilder};
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

/// `TimeoutId` of utils/timeout.h (a C enum), which pgrx's bindings leave out.
type TimeoutId = std::ffi::c_uint;
/// `USER_TIMEOUT` of PostgreSQL 15's utils/timeout.h: the first id free for extensions.
const USER_TIMEOUT: TimeoutId = 12;

extern "C-unwind" {
    fn RegisterTimeout(id: TimeoutId, handler: Option<unsafe extern "C-unwind" fn()>) -> TimeoutId;
    fn enable_timeout_after(id: TimeoutId, delay_ms: std::ffi::c_int);
    fn disable_timeout(id: TimeoutId, keep_indicator: bool);
}

thread_local! {
    /// Our timeout's id, registered once per backend (Postgres has a handful of user slots).
    static TIMEOUT: Cell<Option<TimeoutId>> = const { Cell::new(None) };
}

/// Set by the timer: the cancel that follows is ours, not the client's.
static FIRED: AtomicBool = AtomicBool::new(false);

/// The timer's handler, run from the SIGALRM handler: only flags and the latch, as Postgres's
/// own StatementTimeoutHandler does.
unsafe extern "C-unwind" fn on_deadline() {
    FIRED.store(true, Ordering::SeqCst);
    // SAFETY: sig_atomic_t flags and the process latch, what a signal handler may touch.
    unsafe {
        std::ptr::write_volatile(&raw mut pg_sys::QueryCancelPending, 1);
        std::ptr::write_volatile(&raw mut pg_sys::InterruptPending, 1);
        pg_sys::SetLatch(pg_sys::MyLatch);
    }
}

fn timeout_id() -> TimeoutId {
    if let Some(id) = TIMEOUT.get() {
        return id;
    }
    // SAFETY: registering a handler in the backend's main thread; USER_TIMEOUT asks Postgres for
    // a free user slot (it raises an ERROR when none is left).
    let id = unsafe { RegisterTimeout(USER_TIMEOUT, Some(on_deadline)) };
    TIMEOUT.set(Some(id));
    id
}

/// Runs `f`, cancelling it after `ms` milliseconds with 57014 and a message naming `what` and
/// `setting`. A cancel that is not ours (the client's, statement_timeout) passes through as is.
pub fn within<R>(ms: i32, what: &str, setting: &str, f: impl FnOnce() -> R) -> R {
    let id = timeout_id();
    FIRED.store(false, Ordering::SeqCst);
    // SAFETY: arms our registered timeout; disarmed on both paths below.
    unsafe { enable_timeout_after(id, ms) };
    PgTryBuilder::new(AssertUnwindSafe(f))
        .catch_when(PgSqlErrorCode::ERRCODE_QUERY_CANCELED, |e| {
            // SAFETY: as above.
            unsafe { disable_timeout(id, false) };
            if FIRED.swap(false, Ordering::SeqCst) {
                ErrorReport::new(
                    PgSqlErrorCode::ERRCODE_QUERY_CANCELED,
                    format!("{what} took longer than {ms} ms"),
                    "memory_ext",
                )
                .set_hint(format!("simplify it, or raise {setting}"))
                .report(PgLogLevel::ERROR);
                unreachable!("ereport(ERROR) returned")
            }
            e.rethrow()
        })
        .finally(move || {
            // SAFETY: as above; disarming a timeout that already fired is a no-op.
            unsafe { disable_timeout(id, false) };
            FIRED.store(false, Ordering::SeqCst);
        })
        .execute()
}
