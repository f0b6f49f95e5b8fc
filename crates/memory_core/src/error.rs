//! SQLSTATEs the core's errors map to. The core does not link Postgres, so it names the
//! condition; the pgrx crate turns it into `PgSqlErrorCode` at the SQL boundary
//! (`src/error.rs`).

/// The error classes of docs/api.md. Each domain error enum says which one applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlState {
    /// 22023 invalid_parameter_value: bad ids, roles, ranges, unknown keys, ambiguous edits.
    InvalidParameterValue,
    /// 22001 string_data_right_truncation: text longer than a limit (block char_limit, 280 chars).
    StringDataRightTruncation,
    /// 22004 null_value_not_allowed: a required argument was NULL.
    NullValueNotAllowed,
    /// P0002 no_data_found: unknown agent, block, thread, or `old` text absent.
    NoDataFound,
    /// 42501 insufficient_privilege: read-only block, another tenant, disallowed category.
    InsufficientPrivilege,
    /// 58000 system_error: an external provider (embedding or LLM endpoint) failed.
    SystemError,
    /// 58P01 undefined_file: a file we need (the built-in model) is not installed.
    UndefinedFile,
    /// 0A000 feature_not_supported: asked of a database that lacks what it needs (Citus).
    FeatureNotSupported,
    /// 42710 duplicate_object: a name already taken (a space).
    DuplicateObject,
}

impl SqlState {
    /// The five-character code, as Postgres prints it.
    pub fn code(self) -> &'static str {
        match self {
            SqlState::InvalidParameterValue => "22023",
            SqlState::StringDataRightTruncation => "22001",
            SqlState::NullValueNotAllowed => "22004",
            SqlState::NoDataFound => "P0002",
            SqlState::InsufficientPrivilege => "42501",
            SqlState::SystemError => "58000",
            SqlState::UndefinedFile => "58P01",
            SqlState::FeatureNotSupported => "0A000",
            SqlState::DuplicateObject => "42710",
        }
    }
}

/// What every domain error tells the SQL boundary besides its message.
pub trait SqlError: std::error::Error {
    fn sqlstate(&self) -> SqlState;
    /// Something the caller can do about it, when there is such a thing.
    fn hint(&self) -> Option<String> {
        None
    }
}
