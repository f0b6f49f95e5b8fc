//! The SQL-facing API (API.md): one module per part of the contract.

pub mod audit;
pub mod blocks;
pub mod checkpoints;
pub mod config;
pub mod consolidate;
pub mod embed;
pub mod lifecycle;
pub mod query;
pub mod recall;
pub mod write;
