//! Small SPI helpers for the shapes our queries have.

use crate::error::SpiOk;
use pgrx::datum::{DatumWithOid, FromDatum, IntoDatum};
use pgrx::prelude::*;

/// First column of the first row, or `None` when the statement returned no row (pgrx's
/// `get_one` treats an empty result as an error). Runs read-write, so it serves
/// `INSERT ... RETURNING` and `SELECT ... FOR UPDATE` too.
///
/// # Why no row limit
/// SPI's row count limit stops the executor once it has that many rows; for `INSERT/UPDATE ...
/// RETURNING` that means the statement never finishes as a statement, and its AFTER STATEMENT
/// triggers (our BM25 statistics) silently never fire. Our statements return at most a few
/// rows, so they run to completion.
pub fn one_opt<T: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
) -> Option<T> {
    Spi::connect_mut(|c| {
        let rows = c.update(query, None, args)?;
        if rows.is_empty() {
            Ok(None)
        } else {
            rows.first().get_one::<T>()
        }
    })
    .spi(what)
}
