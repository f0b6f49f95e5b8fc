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
    Spi::connect_mut(|c| first(c.update(query, None, args)?)).spi(what)
}

/// One row of a result, as the mapping functions of [`rows`] and [`row`] see it.
pub type Row<'a> = pgrx::spi::SpiHeapTupleData<'a>;

/// Every row of a read-only `query`, each mapped by `f`: the one loop over SPI rows the store's
/// readers share (`what` names the step in an error).
pub fn rows<T>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
    mut f: impl FnMut(&Row<'_>) -> Result<T, pgrx::spi::Error>,
) -> Vec<T> {
    Spi::connect(|c| {
        c.select(query, None, args)?
            .map(|r| f(&r))
            .collect::<Result<Vec<T>, pgrx::spi::Error>>()
    })
    .spi(what)
}

/// [`rows`] for a statement that writes (`UPDATE ... RETURNING`, `SELECT ... FOR UPDATE`).
pub fn rows_mut<T>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
    mut f: impl FnMut(&Row<'_>) -> Result<T, pgrx::spi::Error>,
) -> Vec<T> {
    Spi::connect_mut(|c| {
        c.update(query, None, args)?
            .map(|r| f(&r))
            .collect::<Result<Vec<T>, pgrx::spi::Error>>()
    })
    .spi(what)
}

/// The first row of `query` mapped by `f`, `None` for no row; runs read-write like [`one_opt`].
pub fn row<T>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
    f: impl FnOnce(&Row<'_>) -> Result<T, pgrx::spi::Error>,
) -> Option<T> {
    Spi::connect_mut(|c| match c.update(query, None, args)?.next() {
        Some(r) => f(&r).map(Some),
        None => Ok(None),
    })
    .spi(what)
}

/// A statement run for its effect, read-write.
pub fn run(query: &str, args: &[DatumWithOid<'_>], what: &str) {
    Spi::run_with_args(query, args).spi(what)
}

/// The first column of the first row, `None` for no row.
fn first<T: FromDatum + IntoDatum>(
    rows: pgrx::spi::SpiTupleTable<'_>,
) -> Result<Option<T>, pgrx::spi::Error> {
    if rows.is_empty() {
        Ok(None)
    } else {
        rows.first().get_one::<T>()
    }
}

thread_local! {
    /// Statements kept prepared in this backend, by their text (see `with_prepared`).
    static PREPARED: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<pgrx::spi::OwnedPreparedStatement>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Most statements kept prepared per backend: memory_query's pool statement has one text per
/// combination of filters, so a handful in practice, plus a few short ones; past this the cache
/// starts over.
const MAX_PREPARED: usize = 64;

/// The kept plan of `query`, prepared on first use. The map is not borrowed while a statement
/// runs, so a statement may fire triggers or call functions that use kept statements too.
fn kept(
    c: &pgrx::spi::SpiClient<'_>,
    query: &str,
    args: &[DatumWithOid<'_>],
    mutating: bool,
) -> Result<std::rc::Rc<pgrx::spi::OwnedPreparedStatement>, pgrx::spi::Error> {
    if let Some(p) = PREPARED.with(|p| p.borrow().get(query).cloned()) {
        return Ok(p);
    }
    let oids: Vec<PgOid> = args.iter().map(|a| PgOid::from(a.oid())).collect();
    let plan = if mutating {
        c.prepare_mut(query, &oids)?
    } else {
        c.prepare(query, &oids)?
    };
    let plan = std::rc::Rc::new(plan.keep());
    PREPARED.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() >= MAX_PREPARED {
            p.clear();
        }
        p.insert(query.to_string(), plan.clone());
    });
    Ok(plan)
}

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
    let plan = kept(c, query, args, false)?;
    let table = c.select(&*plan, None, args)?;
    f(table)
}

/// [`rows`] through a statement kept prepared (see [`with_prepared`]), on the caller's
/// connection: for the statements of a search, which run inside planner settings of their own.
pub fn rows_prepared<T>(
    c: &pgrx::spi::SpiClient<'_>,
    query: &str,
    args: &[DatumWithOid<'_>],
    mut f: impl FnMut(&Row<'_>) -> Result<T, pgrx::spi::Error>,
) -> Result<Vec<T>, pgrx::spi::Error> {
    with_prepared(c, query, args, |t| t.map(|r| f(&r)).collect())
}

/// [`rows`] through a statement kept prepared, with one generic plan per backend
/// ([`with_generic_plan`]): for the short reads by key on the hot paths (memory_query's term
/// statistics, categories in context, related bullets and known entities; memory_write's
/// exact-duplicate check). Run as one-shot
/// statements, or kept under the plan cache's own choice (which keeps custom plans for a
/// partitioned table, whose generic plan it costs with every partition), each was parsed and
/// planned at every call for longer than it ran: pg_stat_statements at 100k memories showed
/// 0.1-0.3 ms of planning each for 0.005-0.03 ms of execution.
pub fn rows_generic<T>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
    f: impl FnMut(&Row<'_>) -> Result<T, pgrx::spi::Error>,
) -> Vec<T> {
    Spi::connect(|c| with_generic_plan(|| rows_prepared(c, query, args, f))).spi(what)
}

/// `one_opt` through a kept plan (parsed once per backend, planned the way Postgres' plan cache
/// decides): for the statements every write runs.
pub fn one_kept<T: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
) -> Option<T> {
    Spi::connect_mut(|c| {
        let plan = kept(c, query, args, true)?;
        first(c.update(&*plan, None, args)?)
    })
    .spi(what)
}

/// [`row`] through a kept plan (parsed once per backend, planned the way Postgres' plan cache
/// decides): for a write's own statement on a hot path (a store put), which as a one-shot
/// statement was parsed and planned at every call.
pub fn row_kept<T>(
    query: &str,
    args: &[DatumWithOid<'_>],
    what: &str,
    f: impl FnOnce(&Row<'_>) -> Result<T, pgrx::spi::Error>,
) -> Option<T> {
    Spi::connect_mut(|c| {
        let plan = kept(c, query, args, true)?;
        match c.update(&*plan, None, args)?.next() {
            Some(r) => f(&r).map(Some),
            None => Ok(None),
        }
    })
    .spi(what)
}

/// A short writing statement (no result wanted) run through a kept plan, for the bookkeeping
/// every retrieval does (access counts, the event row): parsed once per backend, and planned
/// the way Postgres' plan cache decides (a generic plan once it is no dearer than custom ones).
pub fn run_kept(query: &str, args: &[DatumWithOid<'_>], what: &str) {
    Spi::connect_mut(|c| {
        let plan = kept(c, query, args, true)?;
        c.update(&*plan, None, args).map(|_| ())
    })
    .spi(what)
}

/// Runs `f` with planner settings changed, and the caller's values back afterwards (the
/// caller's transaction goes on).
///
/// # Why through Postgres' GUC stack, not `set_config()`
/// Retrieval runs this around every call. It does what a function's `SET` clause does
/// (`fmgr_security_definer`): a new GUC nest level, the values set with `GUC_ACTION_SAVE`, and
/// `AtEOXact_GUC` to pop them. Two SPI statements (read and set, then restore) did the same in
/// ~0.15 ms a call. An error inside `f` never reaches the pop: the (sub)transaction's abort pops
/// every level above its own, so the settings cannot leak.
pub fn with_settings<R>(
    settings: &[(&std::ffi::CStr, &std::ffi::CStr)],
    f: impl FnOnce() -> R,
) -> R {
    // SAFETY: plain calls into the GUC machinery on the backend's own thread, with
    // NUL-terminated strings that set_config_option copies. elevel ERROR makes a bad value
    // raise rather than return 0 (ours are fixed values of known settings).
    let nest = unsafe { pg_sys::NewGUCNestLevel() };
    for (name, value) in settings {
        unsafe {
            pg_sys::set_config_option(
                name.as_ptr(),
                value.as_ptr(),
                pg_sys::GucContext::PGC_USERSET,
                pg_sys::GucSource::PGC_S_SESSION,
                pg_sys::GucAction::GUC_ACTION_SAVE,
                true,
                pg_sys::PGERROR as i32,
                false,
            );
        }
    }
    let r = f();
    // SAFETY: pops exactly the level pushed above (SAVE actions are always undone, whatever
    // isCommit says).
    unsafe { pg_sys::AtEOXact_GUC(true, nest) };
    r
}

/// Runs `f` (statements kept with `with_prepared`) with generic plans: for statements whose
/// every lookup is by key, so that one plan, made once per backend, serves every call. Postgres
/// still picks the tenant's partition when each execution starts (run-time pruning).
///
/// On Citus, custom plans instead: Citus routes a statement to the tenant's shard by the
/// `user_id` value, which a generic plan does not have ("could not create distributed plan").
pub fn with_generic_plan<R>(f: impl FnOnce() -> R) -> R {
    if super::citus::present() {
        return with_custom_plan(f);
    }
    with_settings(&[(c"plan_cache_mode", c"force_generic_plan")], f)
}

/// Runs `f` with custom plans only: for UPDATEs of memory.items kept with `one_kept`/`run_kept`.
/// Postgres' plan cache would otherwise switch them to a generic plan after five runs, and a
/// generic UPDATE of the partitioned table sets up all 16 partitions as result relations
/// (generated columns included) at every execution: 0.68 ms, against 0.54 ms plus 0.2 ms of
/// planning for the same touch of 5 rows.
pub fn with_custom_plan<R>(f: impl FnOnce() -> R) -> R {
    with_settings(&[(c"plan_cache_mode", c"force_custom_plan")], f)
}
