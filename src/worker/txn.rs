//! Transactions of the worker's own: each unit of work commits on its own or rolls back on its
//! own, and an error in one becomes a value for the caller to record instead of ending the
//! process (a failure in one tenant's job must not stop the others).

use pgrx::pg_sys;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::PgTryBuilder;
use std::ffi::CString;
use std::panic::{RefUnwindSafe, UnwindSafe};

/// Runs `f` in a new transaction, shown as `what` in pg_stat_activity.query. Committed when `f`
/// returns; rolled back, with the error's message returned, when it raises. FATAL errors (the
/// SIGTERM of a shutdown, postmaster death) still end the process: that is what they are for.
pub fn run<R>(what: &str, f: impl FnOnce() -> R + UnwindSafe + RefUnwindSafe) -> Result<R, String> {
    let activity = CString::new(what).unwrap_or_default();
    // SAFETY: the worker's main thread, outside any transaction (each call of `run` ends the one
    // it starts, on both paths below); the snapshot pushed here is popped before the commit.
    unsafe {
        pg_sys::SetCurrentStatementStartTimestamp();
        pg_sys::StartTransactionCommand();
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        pg_sys::pgstat_report_activity(pg_sys::BackendState::STATE_RUNNING, activity.as_ptr());
    }
    let result = PgTryBuilder::new(move || {
        let r = f();
        // SAFETY: the snapshot and transaction started above; committing inside the try block
        // means an error at commit (e.g. a deferred check) is caught like any other.
        unsafe {
            pg_sys::PopActiveSnapshot();
            pg_sys::CommitTransactionCommand();
        }
        Ok(r)
    })
    .catch_others(|e| Err(message(e)))
    .execute();
    if result.is_err() {
        // SAFETY: PgTryBuilder has flushed the error state; aborting releases the snapshot,
        // locks, SPI connections and memory of the failed transaction.
        unsafe { pg_sys::AbortCurrentTransaction() };
    }
    // SAFETY: a plain status report, no transaction needed.
    unsafe { pg_sys::pgstat_report_activity(pg_sys::BackendState::STATE_IDLE, std::ptr::null()) };
    result
}

fn message(e: CaughtError) -> String {
    match e {
        CaughtError::PostgresError(r)
        | CaughtError::ErrorReport(r)
        | CaughtError::RustPanic { ereport: r, .. } => r.message().to_string(),
    }
}
