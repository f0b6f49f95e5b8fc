//! Postgres glue shared by the API modules: tenancy, row lookups, pgvector's names, and tsvector reading.

pub mod deadline;
pub mod hints;
pub mod json;
pub mod limits;
pub mod lookup;
pub mod owner;
pub mod spi;
pub mod tenant;
pub mod tsvector;
pub mod vector;
