//! The SQL-facing API (API.md): one module per part of the contract.

pub mod blocks;
pub mod embed;
pub mod recall;
