//! Postgres glue shared by the store, the API and the worker: SPI helpers, tenancy, row
//! lookups, hints, limits, pgvector's names, tsvector reading, full-text pieces, events and
//! whether Citus is there, values kept for a statement (`statement`); and (`version`) the little that differs between PostgreSQL versions.

pub mod citus;
pub mod deadline;
pub mod events;
pub mod fulltext;
pub mod hints;
pub mod json;
pub mod language;
pub mod limits;
pub mod lookup;
pub mod owner;
pub mod spaces;
pub mod spi;
pub mod statement;
pub mod subxact;
pub mod tenant;
pub mod tsvector;
pub mod vector;
pub mod version;
