//! The Postgres-side work of every feature, shared by the SQL functions (src/api/) and the
//! background worker (src/worker/): one module per feature, named as in `api/`,
//! `crates/memory_core/src/` and `sql/queries/<feature>_*.sql`. `search` is the hybrid search
//! engine that memory_query, conversation_search and memory_file_search share; `delta` the
//! delta header. (Named `ops`, operations, because `store` is one of the features: the
//! LangGraph-shaped store of store.rs.)

pub mod access;
pub mod audit;
pub mod blocks;
pub mod changes;
pub mod citus;
pub mod compaction;
pub mod config;
pub mod consent;
pub mod consolidate;
pub mod delta;
pub mod detail;
pub mod entities;
pub mod episodes;
pub mod erase;
pub mod extract;
pub mod files;
pub mod idempotency;
pub mod import;
pub mod lifecycle;
pub mod query;
pub mod recall;
pub mod refine;
pub mod screen;
pub mod search;
pub mod session;
pub mod spaces;
// The store feature (docs/api.md "Store") in the layer of the same name.
#[allow(clippy::module_inception)]
pub mod store;
pub mod summaries;
pub mod tools;
pub mod write;
