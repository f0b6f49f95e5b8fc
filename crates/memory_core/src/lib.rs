//! memory_core: the part of memory_ext that needs no Postgres.
//!
//! Block edits and prompt rendering, token accounting, argument rules. Tested by plain
//! `cargo test -p memory_core` in milliseconds; the pgrx crate (`src/`) adapts it to SQL.

pub mod answer;
pub mod blob;
pub mod blocks;
pub mod budget;
pub mod changes;
pub mod config;
pub mod consent;
pub mod consolidate;
pub mod cosine;
pub mod dedupe;
pub mod delta;
pub mod detail;
pub mod entities;
pub mod error;
pub mod extract;
pub mod files;
pub mod idempotency;
pub mod import;
pub mod language;
pub mod names;
pub mod rank;
pub mod render;
pub mod request;
pub mod schedule;
pub mod screen;
pub mod session;
pub mod spaces;
pub mod store;
pub mod summaries;
pub mod summary;
pub mod text;
pub mod tokens;
pub mod tools;
pub mod validate;
pub mod when;

pub use error::{SqlError, SqlState};
