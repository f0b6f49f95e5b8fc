//! The background worker (docs/api.md "Lifecycle"): the TTL sweep every `memory_ext.ttl_interval`,
//! the purge daily, each tenant's consolidation once a day at its slot, and the embedding
//! backfill whenever rows wait for a vector. One process, connected to `memory_ext.database`,
//! registered only when memory_ext is in `shared_preload_libraries`.
//!
//! # Why it behaves the way it does
//! - Postgres's own signal semantics (SIGTERM as `die()`, SIGHUP as the config-reload flag), as
//!   in contrib's worker_spi: a shutdown interrupts the worker at its next interrupt check (between
//!   batches, tenants and LLM prompts, each bounded by `memory_ext.http_timeout_ms`), which
//!   rolls back the open transaction; no job is left half-done.
//! - Every unit of work is a transaction of its own (txn.rs) and an error in one is recorded
//!   and logged, not fatal: one tenant's failure does not stop the others.
//! - `lock_timeout` is set: the worker gives up on a row an application holds rather than
//!   queueing (and making others queue) behind it.
//! - The schedule lives in tables (memory.worker_jobs, memory.consolidation_runs), so a restart
//!   neither repeats nor skips a daily job.

mod jobs;
mod txn;

use crate::gucs;
use memory_core::schedule;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::pg_sys;
use pgrx::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::CString;
use std::time::{Duration, Instant};

/// The worker's name: pg_stat_activity.backend_type and application_name, the server log.
pub const WORKER_TYPE: &str = "memory_ext worker";

/// Delay before the postmaster restarts a worker that exited with an error (or to connect to a
/// new `memory_ext.database`). 10 s: a worker that fails at start (say, the database does not
/// exist) logs one line per 10 s instead of spinning.
const RESTART_DELAY: Duration = Duration::from_secs(10);

/// `lock_timeout` of the worker's session: no job waits longer than this for a row an
/// application holds; the job fails, is recorded, and runs again later.
const LOCK_TIMEOUT: &str = "5s";

/// Set in the postmaster when it registers the worker; every backend it starts afterwards
/// inherits it (src/ops/access.rs asks whether a worker will count its reads).
static REGISTERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a worker serves this backend's database: registered by this server (memory_ext in
/// shared_preload_libraries, not under pg_upgrade) and `memory_ext.database` names it. The
/// worker may be between a crash and its restart; it counts what waited when it is back.
pub fn serves_this_database() -> bool {
    if !REGISTERED.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    thread_local! {
        static NAME: String = current_database();
    }
    let serves = gucs::database();
    NAME.with(|name| *name == serves)
}

fn current_database() -> String {
    // SAFETY: MyDatabaseId is set once the backend has connected, before any SQL function
    // runs; get_database_name returns a palloc'd copy (NULL for a database that is gone).
    unsafe {
        let name = pg_sys::get_database_name(pg_sys::MyDatabaseId);
        if name.is_null() {
            return String::new();
        }
        std::ffi::CStr::from_ptr(name)
            .to_string_lossy()
            .into_owned()
    }
}

/// Registers the worker from `_PG_init`. Only while the postmaster loads
/// `shared_preload_libraries`: a library loaded later by a backend cannot start workers (the
/// CREATE EXTENSION notice in sql/worker.sql says so).
pub fn register() {
    // SAFETY: a plain global of the postmaster, set around the loading of preload libraries.
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    // Not under pg_upgrade (the server started with -b): the worker's session in its database
    // made pg_upgrade's restore fail ("database ... is being accessed by other users"), and
    // nothing may write while the upgrade moves the catalog (tests/upgrade/pg_upgrade.sh).
    // SAFETY: a plain global the postmaster sets from its options before loading libraries.
    if unsafe { pg_sys::IsBinaryUpgrade } {
        return;
    }
    BackgroundWorkerBuilder::new(WORKER_TYPE)
        .set_type(WORKER_TYPE)
        .set_library("memory_ext")
        .set_function("memory_ext_worker_main")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(RESTART_DELAY))
        .load();
    REGISTERED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The worker process's entry point (named in [`register`]).
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn memory_ext_worker_main(_arg: pg_sys::Datum) {
    // SAFETY: installing handlers in the worker's main thread before signals are unblocked, as
    // every background worker does.
    unsafe {
        crate::pg::version::set_signal_handler(pg_sys::SIGHUP, Some(on_sighup));
        crate::pg::version::set_signal_handler(pg_sys::SIGTERM, Some(on_sigterm));
        pg_sys::BackgroundWorkerUnblockSignals();
    }
    let database = gucs::database();
    // No role: the bootstrap superuser, which every tenant's rows are visible to (RLS is
    // bypassed); the jobs choose their tenants themselves.
    BackgroundWorker::connect_worker_to_spi(Some(&database), None);
    session_settings();
    pgrx::log!("{WORKER_TYPE} started in database \"{database}\"");

    let mut worker = Worker::default();
    loop {
        worker.tick();
        sleep(gucs::worker_naptime_s());
        if reload_requested() {
            if gucs::database() != database {
                pgrx::log!("{WORKER_TYPE}: memory_ext.database changed, restarting");
                // SAFETY: exit code 1 asks the postmaster for a restart after RESTART_DELAY;
                // no transaction is open between ticks.
                unsafe { pg_sys::proc_exit(1) };
            }
            worker.unknown_logged.clear();
        }
    }
}

/// SIGTERM: what Postgres's `die()` does (pgrx exposes it only wrapped for calls from Rust):
/// the next interrupt check ends the process with FATAL, aborting the open transaction.
unsafe extern "C-unwind" fn on_sigterm(_signal: std::ffi::c_int) {
    let saved = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: sig_atomic_t flags and the process latch, which is what a signal handler may
    // touch; errno is restored for the code the signal interrupted.
    unsafe {
        std::ptr::write_volatile(&raw mut pg_sys::InterruptPending, 1);
        std::ptr::write_volatile(&raw mut pg_sys::ProcDiePending, 1);
        pg_sys::SetLatch(pg_sys::MyLatch);
        *libc::__errno_location() = saved;
    }
}

/// SIGHUP: the configuration is re-read at the end of the current tick.
unsafe extern "C-unwind" fn on_sighup(_signal: std::ffi::c_int) {
    let saved = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: as in on_sigterm.
    unsafe {
        std::ptr::write_volatile(&raw mut pg_sys::ConfigReloadPending, 1);
        pg_sys::SetLatch(pg_sys::MyLatch);
        *libc::__errno_location() = saved;
    }
}

fn session_settings() {
    let name = CString::new(WORKER_TYPE).unwrap_or_default();
    // SAFETY: after connecting (MyBEEntry exists); both copy their arguments.
    unsafe {
        pg_sys::pgstat_report_appname(name.as_ptr());
        pg_sys::SetConfigOption(
            c"lock_timeout".as_ptr(),
            CString::new(LOCK_TIMEOUT).unwrap_or_default().as_ptr(),
            pg_sys::GucContext::PGC_SUSET,
            pg_sys::GucSource::PGC_S_SESSION,
        );
    }
}

/// Sleeps up to `seconds` on the latch (a signal wakes it), exits with the postmaster, and
/// acts on a pending SIGTERM.
fn sleep(seconds: i64) {
    // SAFETY: MyLatch is the process latch, valid for the process's life; WL_EXIT_ON_PM_DEATH
    // makes WaitLatch exit the process if the postmaster dies.
    unsafe {
        pg_sys::WaitLatch(
            pg_sys::MyLatch,
            (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
            seconds * 1000,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
    pgrx::check_for_interrupts!();
}

/// SIGHUP: re-reads the configuration files when one arrived.
fn reload_requested() -> bool {
    // SAFETY: a sig_atomic_t flag set by SignalHandlerForConfigReload; reading and clearing it
    // in the main thread is how Postgres's own processes consume it.
    unsafe {
        if std::ptr::read_volatile(&raw const pg_sys::ConfigReloadPending) == 0 {
            return false;
        }
        std::ptr::write_volatile(&raw mut pg_sys::ConfigReloadPending, 0);
        pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP);
    }
    true
}

/// What the worker remembers between ticks: only what keeps the log quiet.
#[derive(Default)]
struct Worker {
    /// "extension not installed" was logged (once until it is installed).
    waiting_logged: bool,
    /// The Citus stand-by last logged ("a Citus worker", "not distributed yet"), once each
    /// until the node's role changes.
    citus_logged: Option<jobs::CitusRole>,
    /// The memory_ext.worker_jobs value whose unknown names were logged.
    unknown_logged: String,
    /// Runs cut short by this worker's predecessor have been recorded.
    interrupted_closed: bool,
    /// The last error logged per job: the same error is not logged again every tick.
    last_error: HashMap<&'static str, String>,
}

impl Worker {
    fn tick(&mut self) {
        match jobs::citus_role() {
            Ok(jobs::CitusRole::Runs) => self.citus_logged = None,
            Ok(role) => {
                if self.citus_logged != Some(role) {
                    match role {
                        jobs::CitusRole::WorkerNode => pgrx::log!(
                            "{WORKER_TYPE}: this node is a Citus worker; the coordinator's worker runs the jobs"
                        ),
                        _ => pgrx::log!(
                            "{WORKER_TYPE}: Citus is installed and the memory tables are not distributed yet; waiting for SELECT memory_citus_distribute()"
                        ),
                    }
                    self.citus_logged = Some(role);
                }
                return;
            }
            Err(e) => return self.report("worker", Err(e)),
        }
        let tick = match jobs::read_tick() {
            Ok(Some(t)) => t,
            Ok(None) => {
                if !self.waiting_logged {
                    pgrx::log!("{WORKER_TYPE}: extension memory_ext is not installed in this database; waiting for CREATE EXTENSION");
                    self.waiting_logged = true;
                }
                return;
            }
            Err(e) => return self.report("worker", Err(e)),
        };
        self.waiting_logged = false;
        if !self.interrupted_closed {
            match jobs::close_interrupted() {
                Ok(cut) => {
                    for job in cut {
                        pgrx::log!("{WORKER_TYPE}: the last {job} run was cut short; recorded as a failure");
                    }
                    self.interrupted_closed = true;
                }
                Err(e) => return self.report("worker", Err(e)),
            }
        }
        // The reads queued since the last tick (src/ops/access.rs), before any job: the TTL
        // sweep judges by what they record. Not a job: there is nothing to schedule or skip.
        if let Err(e) = jobs::fold_access() {
            self.report("access", Err(e));
        }
        let setting = gucs::worker_jobs();
        let (on, unknown) = schedule::parse_jobs(&setting);
        if !unknown.is_empty() && setting != self.unknown_logged {
            pgrx::warning!(
                "{WORKER_TYPE}: memory_ext.worker_jobs names unknown jobs {unknown:?} (jobs: {})",
                schedule::JOBS.join(", ")
            );
            self.unknown_logged = setting;
        }
        let state = |job: &str| tick.jobs.get(job).copied().unwrap_or_default();

        let s = state("ttl_sweep");
        if s.requested
            || (on.contains(&"ttl_sweep")
                && schedule::interval_due(tick.now, s.last_finished, gucs::ttl_interval_s()))
        {
            let r = jobs::run_job("ttl_sweep", jobs::ttl_sweep);
            self.report("ttl_sweep", r);
        }

        let s = state("purge");
        if s.requested
            || (on.contains(&"purge")
                && schedule::interval_due(tick.now, s.last_finished, schedule::DAY))
        {
            let r = jobs::run_job("purge", jobs::purge);
            self.report("purge", r);
        }

        let s = state("consolidate");
        if s.requested || on.contains(&"consolidate") {
            match jobs::due_tenants(&tick, s.requested) {
                Ok(users) if !users.is_empty() || s.requested => {
                    let r = jobs::run_job("consolidate", || jobs::consolidate(&users));
                    self.report("consolidate", r);
                }
                Ok(_) => {}
                Err(e) => self.report("consolidate", Err(e)),
            }
        }

        // Extraction and ended runs: recorded only when they did something (like the backfill).
        for (job, body) in [
            ("extract", jobs::extract as fn(i64) -> Result<Value, String>),
            ("episodes", jobs::episodes),
            ("refine", jobs::refine),
        ] {
            let s = state(job);
            if s.requested {
                let r = jobs::run_job(job, || body(gucs::worker_naptime_s()));
                self.report(job, r);
            } else if on.contains(&job) {
                let started = Instant::now();
                let r = body(gucs::worker_naptime_s());
                // Nothing was due: extraction read no batch, no run ended, nothing failed.
                let idle = matches!(&r, Ok(v) if ["batches", "runs", "failed", "rollups", "items"]
                    .iter()
                    .all(|k| v[*k].as_i64().unwrap_or(0) == 0));
                if !idle {
                    jobs::record(job, started, &r, true);
                }
                self.report(job, r);
            }
        }

        // Summaries: recorded only when they did something.
        let s = state("summaries");
        if s.requested {
            let r = jobs::run_job("summaries", || {
                jobs::summaries(gucs::worker_naptime_s(), true)
            });
            self.report("summaries", r);
        } else if on.contains(&"summaries") {
            let started = Instant::now();
            let r = jobs::summaries(gucs::worker_naptime_s(), false);
            let idle = matches!(&r, Ok(v) if ["defined", "marked", "items", "failed"]
                .iter()
                .all(|k| v[*k].as_i64().unwrap_or(0) == 0));
            if !idle {
                jobs::record("summaries", started, &r, true);
            }
            self.report("summaries", r);
        }

        let s = state("backfill");
        if s.requested {
            let r = jobs::run_job("backfill", || {
                jobs::backfill(gucs::worker_naptime_s()).map(|n| json!({ "embedded": n }))
            });
            self.report("backfill", r);
        } else if on.contains(&"backfill") {
            // Recorded only when it embedded something or failed: an idle backfill would
            // otherwise write a row every naptime.
            let started = Instant::now();
            let r = jobs::backfill(gucs::worker_naptime_s()).map(|n| json!({ "embedded": n }));
            if !matches!(&r, Ok(v) if v["embedded"] == 0) {
                jobs::record("backfill", started, &r, true);
            }
            self.report("backfill", r);
        }
    }

    /// Logs a job's error once (until it succeeds or fails differently).
    fn report(&mut self, job: &'static str, r: Result<Value, String>) {
        match r {
            Ok(_) => {
                self.last_error.remove(job);
            }
            Err(e) => {
                if self.last_error.get(job) != Some(&e) {
                    pgrx::log!("{WORKER_TYPE}: {job} failed: {e}");
                    self.last_error.insert(job, e);
                }
            }
        }
    }
}
