//! Postgres glue shared by the API modules: tenancy and row lookups.

pub mod hints;
pub mod lookup;
pub mod spi;
pub mod tenant;
pub mod vector;
