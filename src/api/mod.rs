//! The SQL-facing API (docs/api.md): `#[pg_extern]` functions only, one module per feature.
//! Each checks its arguments, makes one call into src/ops/ (or src/embed/), and shapes the
//! answer; none runs SQL itself.

pub mod audit;
pub mod blocks;
pub mod changes;
pub mod checkpoints;
pub mod citus;
pub mod compaction;
pub mod config;
pub mod consent;
pub mod consolidate;
pub mod detail;
pub mod embed;
pub mod entities;
pub mod episodes;
pub mod erase;
pub mod extract;
pub mod files;
pub mod import;
pub mod lifecycle;
pub mod query;
pub mod recall;
pub mod session;
pub mod spaces;
pub mod store;
pub mod summaries;
pub mod tools;
pub mod write;

/// A text[] argument without NULL elements (22004 naming the argument otherwise).
fn no_nulls(arg: &str, v: Option<Vec<Option<String>>>) -> Option<Vec<String>> {
    v.map(|list| {
        list.into_iter()
            .map(|x| {
                x.unwrap_or_else(|| {
                    crate::error::raise(
                        memory_core::SqlState::NullValueNotAllowed,
                        format!("{arg} must not contain NULL"),
                        None,
                    )
                })
            })
            .collect()
    })
}
