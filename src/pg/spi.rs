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

thread_local! {
    /// Statements kept prepared in this backend, by their text (see `select_prepared`).
    static PREPARED: std::cell::RefCell<std::collections::HashMap<String, pgrx::spi::OwnedPreparedStatement>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Most statements kept prepared per backend: memory_query's pool statement has one text per
/// combination of filters, so a handful in practice; past this the cache starts over.
const MAX_PREPARED: usize = 32;

/// Runs `query` with `args` through a statement prepared once per backend and kept
/// (`SPI_keepplan`): the text is parsed and analysed once, not on every call.
///
/// # Why, and why still custom plans
/// memory_query's pool statement is long (a dozen CTEs); parsing and analysing it took ~0.8 ms
/// of each call (perf, 100k memories). The caller must still plan each execution with its
/// values (`plan_cache_mode = force_custom_plan`, set by `vector::with_iterative_scan`): a
/// generic plan picks one strategy for every tenant, and the right one depends on the tenant's
/// size — an HNSW scan for a large tenant, an exact scan of a small tenant's few rows (which
/// an HNSW scan would only reach after walking much of a big table's graph). Postgres replans
/// a kept statement by itself when a table, index or the role behind row-level security changes.
pub fn with_prepared<R>(
    c: &pgrx::spi::SpiClient<'_>,
    query: &str,
    args: &[DatumWithOid<'_>],
    f: impl FnOnce(pgrx::spi::SpiTupleTable<'_>) -> Result<R, pgrx::spi::Error>,
) -> Result<R, pgrx::spi::Error> {
    let table = PREPARED.with(|p| {
        let mut p = p.borrow_mut();
        if !p.contains_key(query) {
            if p.len() >= MAX_PREPARED {
                p.clear();
            }
            let oids: Vec<PgOid> = args.iter().map(|a| PgOid::from(a.oid())).collect();
            p.insert(query.to_string(), c.prepare(query, &oids)?.keep());
        }
        // Still borrowed while it runs: a statement that re-entered here would fail cleanly
        // (a borrow error), and memory_query's statements call nothing that does.
        c.select(&p[query], None, args)
    })?;
    f(table)
}
