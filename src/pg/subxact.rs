//! Running a piece of work in a subtransaction whose error becomes a value: what PL/pgSQL's
//! `BEGIN ... EXCEPTION WHEN OTHERS` does (pl_exec.c, exec_stmt_block).
//!
//! # Why
//! memory_tool_call runs a model's tool call through the same code as the SQL functions, which
//! raise errors (an unknown block, text not found, a fact over 280 characters). A model should
//! read such an error and try again, not end its turn with a SQL exception; and nothing the
//! failed call did may stay. The subtransaction gives both: its rollback undoes the call's
//! writes, and the caller's transaction goes on.

use pgrx::pg_sys;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::{PgSqlErrorCode, PgTryBuilder};
use std::panic::AssertUnwindSafe;

/// An error caught by [`catching`]: its message and its SQLSTATE (five characters).
#[derive(Debug, Clone)]
pub struct Caught {
    pub message: String,
    pub sqlstate: String,
}

impl std::fmt::Display for Caught {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (SQLSTATE {})", self.message, self.sqlstate)
    }
}

/// The five characters of a SQLSTATE, from Postgres's packed form (MAKE_SQLSTATE in elog.h:
/// six bits per character, offset from '0').
fn sqlstate(code: PgSqlErrorCode) -> String {
    let packed = code as isize as u32;
    (0..5)
        .map(|i| char::from(((packed >> (6 * i)) & 0x3F) as u8 + b'0'))
        .collect()
}

/// Runs `f` in a subtransaction: `Ok` with its result, committed into the caller's
/// transaction; or `Err` with the error's message and SQLSTATE, everything it did rolled
/// back. A query cancel or statement timeout is not caught: it still ends the statement.
pub fn catching<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
    // SAFETY: the backend's own thread inside a transaction (a SQL function is running); the
    // memory context and resource owner saved here are restored on both paths, as pl_exec.c does.
    let (context, owner) = unsafe {
        let context = pg_sys::CurrentMemoryContext;
        let owner = pg_sys::CurrentResourceOwner;
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(context);
        (context, owner)
    };
    let restore = move || unsafe {
        // SAFETY: the context and owner of the caller, saved above, still exist (they belong to
        // the outer transaction).
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
    };
    let result = PgTryBuilder::new(AssertUnwindSafe(|| {
        let r = f();
        // SAFETY: the subtransaction begun above, still the current one: `f` returned normally.
        unsafe { pg_sys::ReleaseCurrentSubTransaction() };
        Ok(r)
    }))
    .catch_others(|e| Err(Box::new(e)))
    .execute();
    match result {
        Ok(r) => {
            restore();
            Ok(r)
        }
        Err(e) => {
            // SAFETY: PgTryBuilder has copied and flushed the error; rolling back releases the
            // subtransaction's locks, snapshots, SPI connections and memory.
            unsafe { pg_sys::RollbackAndReleaseCurrentSubTransaction() };
            restore();
            let (message, code) = match e.as_ref() {
                CaughtError::PostgresError(r)
                | CaughtError::ErrorReport(r)
                | CaughtError::RustPanic { ereport: r, .. } => {
                    (r.message().to_string(), r.sql_error_code())
                }
            };
            if matches!(
                code,
                PgSqlErrorCode::ERRCODE_QUERY_CANCELED | PgSqlErrorCode::ERRCODE_ADMIN_SHUTDOWN
            ) {
                // A cancel or timeout belongs to the statement, not to the tool call.
                (*e).rethrow();
            }
            Err(Caught {
                message,
                sqlstate: sqlstate(code),
            })
        }
    }
}
