//! The SQL-facing API (docs/api.md): one module per part of the contract.

pub mod audit;
pub mod blocks;
pub mod checkpoints;
pub mod compaction;
pub mod config;
pub mod consolidate;
pub mod detail;
pub mod embed;
pub mod episodes;
pub mod events;
pub mod files;
pub mod lifecycle;
pub mod query;
pub mod recall;
pub mod write;
