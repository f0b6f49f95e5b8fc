//! Small SPI helpers for the shapes our queries have.

use crate::error::SpiOk;
use pgrx::datum::{DatumWithOid, FromDatum, IntoDatum};
use pgrx::prelude::*;

/// First column of the first row, or `None` when the statement returned no row (pgrx's
/// `get_one` treats an empty result as an error). Runs read-write, so it serves
/// `INSERT ... RETURNING` and `SELECT ... FOR UPDATE` too.
pub fn one_opt<T: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
) -> Option<T> {
    Spi::connect_mut(|c| {
        let rows = c.update(query, Some(1), args)?;
        if rows.is_empty() {
            Ok(None)
        } else {
            rows.first().get_one::<T>()
        }
    })
    .spi(what)
}
