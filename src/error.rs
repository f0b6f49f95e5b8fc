//! The SQL boundary for errors: every domain error of `memory_core` (and a few of our own)
//! becomes an `ereport(ERROR)` with its SQLSTATE, message and hint. Raising aborts the
//! statement, so whatever the function had written is rolled back with it: nothing is ever
//! half-written.

use memory_core::{SqlError, SqlState};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

fn errcode(s: SqlState) -> PgSqlErrorCode {
    match s {
        SqlState::InvalidParameterValue => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        SqlState::StringDataRightTruncation => PgSqlErrorCode::ERRCODE_STRING_DATA_RIGHT_TRUNCATION,
        SqlState::NullValueNotAllowed => PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
        SqlState::NoDataFound => PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
        SqlState::InsufficientPrivilege => PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
        SqlState::SystemError => PgSqlErrorCode::ERRCODE_SYSTEM_ERROR,
        SqlState::UndefinedFile => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
        SqlState::FeatureNotSupported => PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
        SqlState::DuplicateObject => PgSqlErrorCode::ERRCODE_DUPLICATE_OBJECT,
    }
}

/// Raise an ERROR. Never returns.
#[track_caller]
pub fn raise(state: SqlState, message: impl Into<String>, hint: Option<String>) -> ! {
    let mut report = ErrorReport::new(errcode(state), message.into(), "memory_ext");
    if let Some(h) = hint {
        report = report.set_hint(h);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// Unwrap a domain result or raise its error.
pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T, E: SqlError> OrRaise<T> for Result<T, E> {
    #[track_caller]
    fn or_raise(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => raise(e.sqlstate(), e.to_string(), e.hint()),
        }
    }
}

/// Unwrap an SPI result. A failing statement already raised its own Postgres error (with its
/// own SQLSTATE) before we get here; what is left are type mismatches between our queries and
/// our code, which are bugs, so they surface as internal errors with the query's purpose.
pub trait SpiOk<T> {
    fn spi(self, what: &str) -> T;
}

impl<T> SpiOk<T> for Result<T, pgrx::spi::Error> {
    #[track_caller]
    fn spi(self, what: &str) -> T {
        self.unwrap_or_else(|e| {
            ErrorReport::new(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("{what}: {e}"),
                "memory_ext",
            )
            .report(PgLogLevel::ERROR);
            unreachable!("ereport(ERROR) returned")
        })
    }
}

/// Keeps Rust backtraces out of every error a client receives.
///
/// pgrx attaches the backtrace its panic hook captured to the ERROR's DETAIL, and every
/// `raise` above travels as a panic: with `RUST_BACKTRACE=1` in the server's environment, each
/// SQL error would carry build paths and symbol names to the client. `RUST_LIB_BACKTRACE`
/// takes precedence over `RUST_BACKTRACE` for `Backtrace::capture`, so this turns capturing off
/// whatever the environment says (a panic message on the server's own stderr still may print
/// one).
pub fn no_backtraces() {
    // Called from _PG_init, before this library has started any thread of its own (the
    // built-in model's threads start on first use), so nothing reads the environment
    // concurrently.
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
}
