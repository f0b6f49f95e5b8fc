//! The worker's jobs and their bookkeeping in memory.worker_jobs / memory.consolidation_runs.
//! Each job is the same code as its SQL function (api/lifecycle.rs, api/consolidate.rs,
//! api/embed.rs), called for all tenants at once (TTL sweep, purge) or one tenant per
//! transaction (consolidation), so that pg_cron calling the SQL functions gets the same result.

use super::txn;
use crate::embed::reembed;
use crate::error::SpiOk;
use crate::gucs;
use crate::ops::{consolidate, episodes, erase, extract, lifecycle};
use crate::pg::spi;
use memory_core::schedule;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Instant;

/// What memory.worker_jobs says about one job at the start of a tick.
#[derive(Debug, Default, Clone, Copy)]
pub struct JobState {
    pub requested: bool,
    pub last_finished: Option<i64>,
}

/// The clock and the jobs' state, read in one transaction per tick.
pub struct Tick {
    pub now: i64,
    pub day_start: i64,
    pub jobs: HashMap<String, JobState>,
}

/// Reads the clock (Postgres's, so that the server's time zone decides where a day starts) and
/// memory.worker_jobs. `None` when the extension is not installed in this database.
pub fn read_tick() -> Result<Option<Tick>, String> {
    txn::run("memory_ext worker: reading job state", || {
        let installed = spi::one_opt::<bool>(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'memory_ext') AND to_regclass('memory.worker_jobs') IS NOT NULL",
            &[],
            "checking for the extension",
        )
        .unwrap_or(false);
        if !installed {
            return None;
        }
        let (now, day_start) = Spi::get_two::<f64, f64>(
            "SELECT extract(epoch FROM now())::float8, extract(epoch FROM date_trunc('day', now()))::float8",
        )
        .spi("reading the clock");
        let jobs: HashMap<String, JobState> = spi::rows(
            "SELECT job, requested_at IS NOT NULL, extract(epoch FROM last_finished_at)::float8 FROM memory.worker_jobs",
            &[],
            "reading memory.worker_jobs",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    JobState {
                        requested: r.get::<bool>(2)?.unwrap_or(false),
                        last_finished: r.get::<f64>(3)?.map(|x| x as i64),
                    },
                ))
            },
        )
        .into_iter()
        .collect();
        Some(Tick {
            now: now.unwrap_or(0.0) as i64,
            day_start: day_start.unwrap_or(0.0) as i64,
            jobs,
        })
    })
}

/// Where this node stands in a Citus cluster, for the worker (docs/citus.md).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CitusRole {
    /// No Citus here, or the coordinator of distributed tables: the jobs run.
    Runs,
    /// A worker node: the jobs are the coordinator's worker's, which reaches every shard through
    /// the distributed tables; one running on each node would repeat every job.
    WorkerNode,
    /// A coordinator whose memory tables are not distributed yet: a job would race
    /// memory_citus_distribute() for the same tables (a distributed deadlock in a test).
    Undistributed,
}

/// This node's role (sql/queries/worker_citus_role.sql), asked before every tick.
pub fn citus_role() -> Result<CitusRole, String> {
    txn::run(
        "memory_ext worker: asking Citus for this node's role",
        || {
            if !crate::pg::citus::present() {
                return CitusRole::Runs;
            }
            let role = spi::one_opt::<String>(
                include_str!("../../sql/queries/worker_citus_role.sql"),
                &[],
                "asking Citus for this node's role",
            );
            match role.as_deref() {
                Some("coordinator") => CitusRole::Runs,
                Some("undistributed") => CitusRole::Undistributed,
                _ => CitusRole::WorkerNode,
            }
        },
    )
}

/// Runs one job with its bookkeeping: started in one transaction, the job in its own, the
/// outcome (which answers the request, if any) in a third, so that a failed job still leaves
/// its error and a run cut short leaves its request for the next worker.
pub fn run_job(job: &str, body: impl FnOnce() -> Result<Value, String>) -> Result<Value, String> {
    let name = job.to_string();
    let _ = txn::run("memory_ext worker: job bookkeeping", move || {
        spi::run(
            include_str!("../../sql/queries/worker_job_start.sql"),
            &[name.as_str().into()],
            "marking a job started",
        )
    });
    let started = Instant::now();
    let outcome = body();
    record(job, started, &outcome, false);
    outcome
}

/// Records a finished run of `job` that began at `started`; `stamp_start` also sets
/// last_started_at (for the backfill, which records only runs that did something).
pub fn record(job: &str, started: Instant, outcome: &Result<Value, String>, stamp_start: bool) {
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let (counts, error) = match outcome {
        Ok(v) => (Some(JsonB(v.clone())), None),
        Err(e) => (None, Some(e.clone())),
    };
    let name = job.to_string();
    let recorded = txn::run("memory_ext worker: job bookkeeping", move || {
        spi::run(
            include_str!("../../sql/queries/worker_job_finish.sql"),
            &[
                name.as_str().into(),
                ms.into(),
                counts.into(),
                error.into(),
                stamp_start.into(),
            ],
            "recording a job's outcome",
        )
    });
    if let Err(e) = recorded {
        pgrx::log!("memory_ext worker: could not record the outcome of {job}: {e}");
    }
}

/// Records as failures the job runs that began and never finished (the worker was killed or
/// the server stopped mid-run); called once per worker process. Returns those jobs.
pub fn close_interrupted() -> Result<Vec<String>, String> {
    txn::run("memory_ext worker: interrupted runs", || {
        spi::rows_mut(
            include_str!("../../sql/queries/worker_job_interrupted.sql"),
            &[],
            "recording interrupted job runs",
            |r| r.get::<String>(1).map(Option::unwrap_or_default),
        )
    })
}

/// Memories soft-deleted per TTL transaction. Each costs about what a memory_write does
/// (new index entries, history, change log, term statistics: ~12 ms at a million memories), so
/// 200 keeps a batch's row locks to a few seconds; a retrieval touching one of them waits at
/// most that long.
const TTL_BATCH: usize = 200;

/// The access queue counted on the memories (src/ops/access.rs), in a transaction of its own.
/// Not on Citus, where reads write their access themselves and the queue stays empty.
pub fn fold_access() -> Result<(), String> {
    txn::run("memory_ext worker: counting access", || {
        if !crate::pg::citus::present() {
            crate::ops::access::fold(None);
        }
    })
}

/// The TTL sweep: the candidates in one read-only pass, then soft-deleted in short
/// transactions. A batch that fails (say, on lock_timeout) is left for the next sweep.
pub fn ttl_sweep() -> Result<Value, String> {
    let found = txn::run("memory_ext worker: TTL candidates", || {
        lifecycle::ttl_candidates(None)
    })?;
    let (mut swept, mut failed, mut last_error) = (0, 0, None);
    for chunk in found.chunks(TTL_BATCH) {
        pgrx::check_for_interrupts!();
        let (users, ids): (Vec<String>, Vec<String>) = chunk.iter().cloned().unzip();
        match txn::run("memory_ext worker: TTL sweep", move || {
            lifecycle::ttl_sweep_batch(users, ids)
        }) {
            Ok(n) => swept += n,
            Err(e) => {
                failed += 1;
                last_error = Some(e);
            }
        }
    }
    match last_error {
        Some(e) if swept == 0 => Err(e),
        _ => Ok(
            json!({ "soft_deleted": swept, "candidates": found.len(), "batches_failed": failed }),
        ),
    }
}

pub fn purge() -> Result<Value, String> {
    txn::run("memory_ext worker: purge", || {
        let (purged, pruned) = lifecycle::purge(None);
        json!({ "purged": purged, "fingerprints_pruned": pruned })
    })
}

/// The tenants with memories and when each was last consolidated.
fn tenants() -> Result<Vec<(String, Option<i64>)>, String> {
    txn::run("memory_ext worker: listing tenants", || {
        spi::rows(
            include_str!("../../sql/queries/worker_tenants.sql"),
            &[],
            "listing tenants",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<f64>(2)?.map(|x| x as i64),
                ))
            },
        )
    })
}

/// The tenants whose daily slot has come (all of them when `everyone`, after a
/// memory_worker_run('consolidate')).
pub fn due_tenants(tick: &Tick, everyone: bool) -> Result<Vec<String>, String> {
    let (hour, window) = (
        gucs::consolidation_hour(),
        gucs::consolidation_window_hours(),
    );
    Ok(tenants()?
        .into_iter()
        .filter(|(user, last)| {
            everyone
                || schedule::consolidation_due(tick.now, tick.day_start, hour, window, user, *last)
        })
        .map(|(user, _)| user)
        .collect())
}

/// Consolidates `users`, one transaction each; a tenant's failure is recorded against it and
/// the run goes on. Interrupts are checked between tenants (and between LLM prompts inside).
pub fn consolidate(users: &[String]) -> Result<Value, String> {
    let max_pairs = gucs::consolidation_max_pairs();
    let mut total = consolidate::Counts::default();
    let mut failed = 0;
    let mut last_error = None;
    for user in users {
        pgrx::check_for_interrupts!();
        let u = user.clone();
        let done = txn::run("memory_ext worker: consolidating a tenant", move || {
            if !erase::hold_tenant(&u) {
                return consolidate::Counts::default();
            }
            let c = consolidate::consolidate_tenant(&u, max_pairs);
            record_tenant(&u, Some(c.json()), None);
            c
        });
        match done {
            Ok(c) => total.add(c),
            Err(e) => {
                failed += 1;
                pgrx::log!("memory_ext worker: consolidation of tenant \"{user}\" failed: {e}");
                let (u, msg) = (user.clone(), e.clone());
                let _ = txn::run("memory_ext worker: job bookkeeping", move || {
                    record_tenant(&u, None, Some(&msg))
                });
                last_error = Some(format!("tenant \"{user}\": {e}"));
            }
        }
    }
    let mut v = total.json();
    v["tenants"] = json!(users.len());
    v["tenants_failed"] = json!(failed);
    match last_error {
        // Every tenant failed: the job failed (and says why); some did: counts and the rest
        // are in memory.consolidation_runs.
        Some(e) if failed == users.len() => Err(e),
        _ => Ok(v),
    }
}

fn record_tenant(user: &str, counts: Option<Value>, error: Option<&str>) {
    spi::run(
        include_str!("../../sql/queries/worker_consolidated.sql"),
        &[user.into(), counts.map(JsonB).into(), error.into()],
        "recording a tenant's consolidation",
    );
}

/// Embeds rows without a vector, a batch per transaction, until a batch embeds nothing or
/// `budget_s` has passed (so that due jobs and shutdown are not kept waiting). A batch is
/// shared between the tenants with rows waiting (src/embed/reembed.rs), so it can come back
/// short while one tenant still has more: only an empty one ends the run. Rows whose
/// embedding fails wait in memory.embedding_failures for their retry (bounded attempts).
pub fn backfill(budget_s: i64) -> Result<i64, String> {
    let batch = gucs::backfill_batch();
    let started = Instant::now();
    let mut total = 0;
    loop {
        pgrx::check_for_interrupts!();
        let n = txn::run("memory_ext worker: embedding backfill", move || {
            reembed::reembed(batch)
        })?;
        total += n;
        if n == 0 || started.elapsed().as_secs() as i64 >= budget_s {
            return Ok(total);
        }
    }
}

/// Makes `user` the transaction's tenant: the store's lookups by thread id resolve in it (the
/// worker sees every tenant, and ids are unique only per tenant). False, with nothing done,
/// while an erasure of the tenant is under way: the caller drops the work
/// (src/ops/erase.rs `hold_tenant`).
fn as_tenant(user: &str) -> bool {
    if !erase::hold_tenant(user) {
        return false;
    }
    spi::run(
        "SELECT set_config('memory_ext.user_id', $1, true)",
        &[user.into()],
        "setting the tenant",
    );
    true
}

/// Threads looked at per extraction pass.
const EXTRACT_THREADS: i64 = 200;

/// Extraction: each thread with messages past its watermark, a batch per transaction (the
/// batch and its watermark commit together: src/ops/extract.rs), until every thread is read,
/// or its LLM call failed, or `budget_s` has passed. Threads take turns, a batch each per round
/// in the tenants' turns of sql/queries/extract_due.sql: a thread with a long backlog does not
/// hold up the rest. A batch that raises is rolled back and its thread retried after a
/// backoff; the others go on.
pub fn extract(budget_s: i64) -> Result<Value, String> {
    let started = Instant::now();
    let due = txn::run("memory_ext worker: threads to extract", || {
        extract::due(EXTRACT_THREADS)
    })?;
    let threads = due.len();
    let mut queue: std::collections::VecDeque<(String, String)> = due.into();
    let mut total = extract::Counts::default();
    let mut last_error = None;
    while let Some((user, thread)) = queue.pop_front() {
        pgrx::check_for_interrupts!();
        let (u, t) = (user.clone(), thread.clone());
        let r = txn::run("memory_ext worker: extraction", move || {
            if !as_tenant(&u) {
                return extract::Batch::Idle;
            }
            extract::batch(&u, &t, true)
        });
        match r {
            Ok(extract::Batch::Idle) => {}
            // More may be waiting: the thread's next batch comes after the others' turns.
            Ok(extract::Batch::Done(c)) => {
                total.add(&c);
                queue.push_back((user, thread));
            }
            Ok(extract::Batch::Failed(c)) => {
                last_error.clone_from(&c.error);
                total.add(&c);
            }
            Err(e) => {
                total.failed += 1;
                let (u, t, msg) = (user.clone(), thread.clone(), e.clone());
                let _ = txn::run("memory_ext worker: extraction bookkeeping", move || {
                    extract::record_error(&u, &t, &msg)
                });
                last_error = Some(format!("thread \"{thread}\" of tenant \"{user}\": {e}"));
            }
        }
        if started.elapsed().as_secs() as i64 >= budget_s {
            break;
        }
    }
    let mut v = total.json();
    v["threads"] = json!(threads);
    v["error"] = json!(last_error);
    Ok(v)
}

/// Runs ended by run_end or by idleness (memory_ext.run_idle_timeout): the episode and, when
/// the context is full, compaction, one run per transaction; a failed run is retried with a
/// backoff, at most episodes::MAX_END_ATTEMPTS times. Then, hourly, the weekly project
/// roll-ups that are due.
pub fn episodes(budget_s: i64) -> Result<Value, String> {
    let started = Instant::now();
    let idle = gucs::run_idle_timeout_s();
    let due = txn::run("memory_ext worker: ended runs", move || {
        episodes::due(50, idle)
    })?;
    let (mut written, mut compacted, mut failed, mut runs) = (0, 0, 0, 0);
    let mut last_error = None;
    for (user, thread, run, window, requested) in due {
        pgrx::check_for_interrupts!();
        runs += 1;
        let (u, t, req) = (user.clone(), thread.clone(), requested.clone());
        let r = txn::run("memory_ext worker: ending a run", move || {
            if !as_tenant(&u) {
                return json!({"episode": null, "compacted": 0});
            }
            let v = episodes::finish_run(&u, &t, run.as_deref(), window);
            if let Some(at) = &req {
                episodes::ended(&u, &t, at);
            }
            v
        });
        match r {
            Ok(v) => {
                written += i64::from(!v["episode"].is_null());
                compacted += v["compacted"].as_i64().unwrap_or(0);
            }
            Err(e) => {
                failed += 1;
                let (u, t, msg) = (user.clone(), thread.clone(), e.clone());
                let _ = txn::run("memory_ext worker: run-end bookkeeping", move || {
                    episodes::end_failed(&u, &t, &msg)
                });
                last_error = Some(format!("thread \"{thread}\" of tenant \"{user}\": {e}"));
            }
        }
        if started.elapsed().as_secs() as i64 >= budget_s {
            break;
        }
    }
    let rolled = rollups(&mut last_error);
    Ok(json!({
        "runs": runs, "episodes": written, "compacted_messages": compacted, "failed": failed,
        "rollups": rolled, "error": last_error,
    }))
}

/// Items looked at per refine pass.
const REFINE_ITEMS: i64 = 100;

/// What application calls wrote without the model and left `pending` for it
/// (src/ops/refine.rs): one item per transaction, tenants taking turns, until none is left or
/// `budget_s` has passed. A failed call leaves the item pending for the next tick, at most
/// refine::REFINE_ATTEMPTS times. Without an LLM configured nothing is done: what is pending
/// waits for one.
pub fn refine(budget_s: i64) -> Result<Value, String> {
    use crate::ops::refine::{self, Refined};
    if gucs::llm().is_none() {
        return Ok(json!({"items": 0, "refined": 0, "kept": 0, "failed": 0, "error": null}));
    }
    let started = Instant::now();
    let due = txn::run("memory_ext worker: what to refine", || {
        refine::due(REFINE_ITEMS)
    })?;
    let (mut refined, mut kept, mut failed) = (0, 0, 0);
    let mut last_error = None;
    let items = due.len();
    for (user, kind, id) in due {
        pgrx::check_for_interrupts!();
        let (u, i) = (user.clone(), id.clone());
        let r = txn::run("memory_ext worker: refining", move || {
            if !as_tenant(&u) {
                return Refined::Gone;
            }
            refine::one(&u, kind, &i)
        });
        let error = match r {
            Ok(Refined::Done) => {
                refined += 1;
                None
            }
            Ok(Refined::Gone) => None,
            Ok(Refined::Kept(e)) => {
                kept += 1;
                e
            }
            Ok(Refined::Retry(e)) | Err(e) => Some(e),
        };
        if let Some(e) = error {
            failed += 1;
            last_error = Some(format!("{kind:?} {id} of tenant \"{user}\": {e}"));
        }
        if started.elapsed().as_secs() as i64 >= budget_s {
            break;
        }
    }
    Ok(json!({
        "items": items, "refined": refined, "kept": kept, "failed": failed, "error": last_error,
    }))
}

/// Summaries compared or refreshed per pass.
const SUMMARY_ITEMS: i64 = 100;

/// When the worker last looked for built-in summaries to define: at most every 10 minutes (the
/// look reads every tenant's memories and entities); a requested run looks at once.
static SUMMARIES_LOOKED: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);

/// Summaries the worker keeps (src/ops/summaries.rs): defines the built-in ones that are due,
/// compares fresh ones whose tenant changed a memory with what their scope gives now, then
/// writes a new version of each stale one — one summary per transaction, tenants taking turns,
/// until none is left or `budget_s` has passed.
pub fn summaries(budget_s: i64, requested: bool) -> Result<Value, String> {
    use crate::ops::summaries::{self, Refreshed};
    let started = Instant::now();
    // On a Citus cluster just updated, the summaries' tables wait for memory_citus_distribute().
    let ready = txn::run("memory_ext worker: summaries' tables", || {
        crate::pg::citus::distributed("memory.summaries")
            && crate::pg::citus::distributed("memory.summary_versions")
    })?;
    if !ready {
        return Ok(
            json!({"defined": 0, "marked": 0, "items": 0, "written": 0, "failed": 0,
                         "waiting": 0, "error": null}),
        );
    }
    let mut last_error = None;
    let look = {
        let mut looked = SUMMARIES_LOOKED.lock().unwrap_or_else(|e| e.into_inner());
        let due = requested || looked.is_none_or(|t| t.elapsed().as_secs() >= 600);
        if due {
            *looked = Some(Instant::now());
        }
        due
    };
    let defined = if look {
        txn::run("memory_ext worker: built-in summaries", || {
            crate::pg::owner::as_owner(|| summaries::discover(None))
        })
        .unwrap_or_else(|e| {
            last_error = Some(format!("built-in summaries: {e}"));
            0
        })
    } else {
        0
    };
    let changed = txn::run("memory_ext worker: summaries to compare", || {
        summaries::changed(SUMMARY_ITEMS)
    })?;
    let mut marked = 0;
    for (user, name) in changed {
        pgrx::check_for_interrupts!();
        let (u, n) = (user.clone(), name.clone());
        match txn::run("memory_ext worker: comparing a summary", move || {
            as_tenant(&u) && crate::pg::owner::as_owner(|| summaries::check(&u, &n))
        }) {
            Ok(true) => marked += 1,
            Ok(false) => {}
            Err(e) => last_error = Some(format!("summary {name:?} of tenant \"{user}\": {e}")),
        }
        if started.elapsed().as_secs() as i64 >= budget_s {
            break;
        }
    }
    let due = txn::run("memory_ext worker: stale summaries", || {
        summaries::due(SUMMARY_ITEMS)
    })?;
    let items = due.len();
    let (mut written, mut failed, mut waiting) = (0, 0, 0);
    for (user, name) in due {
        pgrx::check_for_interrupts!();
        if started.elapsed().as_secs() as i64 >= budget_s {
            break;
        }
        let (u, n) = (user.clone(), name.clone());
        let r = txn::run("memory_ext worker: refreshing a summary", move || {
            if !as_tenant(&u) {
                return Refreshed::Gone;
            }
            summaries::refresh(&u, &n, false)
        });
        match r {
            Ok(Refreshed::Written(_)) => written += 1,
            Ok(Refreshed::Current | Refreshed::Gone) => {}
            Ok(Refreshed::Budget) => waiting += 1,
            Ok(Refreshed::Retry(e)) | Err(e) => {
                failed += 1;
                last_error = Some(format!("summary {name:?} of tenant \"{user}\": {e}"));
            }
        }
    }
    Ok(json!({
        "defined": defined, "marked": marked, "items": items, "written": written,
        "failed": failed, "waiting": waiting, "error": last_error,
    }))
}

/// When the worker last looked for projects to roll up: at most once an hour (a roll-up is
/// weekly; the look reads every tenant's episode files).
static ROLLUP_LOOKED: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);

/// Weekly project roll-ups (src/ops/episodes.rs `rollup_one`), one project per transaction.
fn rollups(last_error: &mut Option<String>) -> i64 {
    {
        let mut looked = ROLLUP_LOOKED.lock().unwrap_or_else(|e| e.into_inner());
        if looked.is_some_and(|t| t.elapsed().as_secs() < 3600) {
            return 0;
        }
        *looked = Some(Instant::now());
    }
    let due = match txn::run("memory_ext worker: projects to roll up", || {
        episodes::rollups_due(None, None, false)
    }) {
        Ok(d) => d,
        Err(e) => {
            *last_error = Some(format!("roll-ups: {e}"));
            return 0;
        }
    };
    let mut done = 0;
    for d in due {
        pgrx::check_for_interrupts!();
        let (user, project) = (d.0.clone(), d.1.clone());
        let r = txn::run("memory_ext worker: rolling up a project", move || {
            if !as_tenant(&d.0) {
                return Value::Null;
            }
            episodes::rollup_one(d)
        });
        match r {
            Ok(_) => done += 1,
            Err(e) => {
                *last_error = Some(format!(
                    "roll-up of project \"{project}\" of tenant \"{user}\": {e}"
                ))
            }
        }
    }
    done
}
