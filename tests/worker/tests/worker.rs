//! The background worker on a real server (scripts/test.sh worker: memory_ext and pg_cron
//! preloaded, memory_ext.database = this database, worker_naptime 1 s, ttl_interval 2 s,
//! worker_jobs = 'ttl_sweep,purge,backfill' — consolidation is left to memory_worker_run and
//! pg_cron, as a DBA who schedules it with pg_cron would set it).
//!
//! Tests change server-wide settings and restart or crash the server: they take turns (LOCK).

use memory_ext_standin::StandIn;
use memory_ext_worker_tests::{
    admin, poll, set_system, start_server, stop_server, unique, worker_pid,
};
use postgres::types::Json;
use postgres::{Client, GenericClient};
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static LOCK: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A 384-d unit vector: `c` on axis `a`, the rest on axis `b`.
fn v(a: usize, b: usize, c: f64) -> Value {
    let mut x = vec![0.0; 384];
    x[a] = c;
    x[b] = (1.0 - c * c).sqrt();
    json!(x)
}

fn tenant(c: &mut Client, prefix: &str) -> String {
    let user = unique(prefix);
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    user
}

fn write(c: &mut Client, memory: Value) {
    c.execute("SELECT memory_write($1)", &[&Json(memory)])
        .unwrap();
}

fn count(c: &mut Client, sql: &str, user: &str) -> i64 {
    c.query_one(sql, &[&user]).unwrap().get(0)
}

fn status(c: &mut Client, job: &str) -> (i64, Option<Value>, Option<String>) {
    let r = c
        .query_one(
            "SELECT runs, last_counts, last_error FROM memory.worker_status WHERE job = $1",
            &[&job],
        )
        .unwrap();
    (
        r.get(0),
        r.get::<_, Option<Json<Value>>>(1).map(|j| j.0),
        r.get(2),
    )
}

/// The stand-in as the LLM, taking 3 s per same-fact prompt (under memory_ext.http_timeout_ms,
/// 5 s), so that a consolidation run is still going when a test stops or kills the worker.
fn slow_llm(c: &mut Client, standin: &StandIn) {
    set_system(
        c,
        &[
            (
                "memory_ext.llm_url",
                Some(&format!("{}/v1", standin.base())),
            ),
            ("memory_ext.llm_model", Some("judge-slow-3000")),
        ],
    );
}

fn slow_llm_off(c: &mut Client) {
    set_system(
        c,
        &[("memory_ext.llm_url", None), ("memory_ext.llm_model", None)],
    );
}

/// `pairs` near-duplicate pairs (cosine 0.9, between the link and merge thresholds) for `user`.
fn pairs(c: &mut Client, user: &str, pairs: usize) {
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{user}'; SET memory_ext.link_threshold = 0.99"
    ))
    .unwrap();
    for i in 0..pairs {
        write(
            c,
            json!({"text": format!("Kai likes green tea number {i}."), "importance": 2, "embedding": v(2 * i, 2 * i + 1, 1.0)}),
        );
        write(
            c,
            json!({"text": format!("Kai really likes green tea number {i}."), "importance": 2, "embedding": v(2 * i, 2 * i + 1, 0.9)}),
        );
    }
    c.batch_execute("RESET memory_ext.link_threshold").unwrap();
}

/// A tenant's one memory's access_count and its reads waiting in memory.access_queue.
fn access(c: &mut impl GenericClient, user: &str) -> (i64, i64) {
    let r = c
        .query_one(
            "SELECT (SELECT access_count FROM memory.items WHERE user_id = $1),
                    (SELECT count(*) FROM memory.access_queue WHERE user_id = $1)",
            &[&user],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

/// Where the worker serves the database, a read queues its access and the worker counts it
/// (src/ops/access.rs): nothing on the memory inside the read, the count after the next look,
/// the queue empty again, and reads within the minute counted once.
#[test]
fn the_worker_counts_the_access_reads_queue_at_most_once_a_minute() {
    let _t = turn();
    let mut c = admin();
    assert!(worker_pid(&mut c, 30).is_some(), "no worker running");
    let user = tenant(&mut c, "access");
    write(
        &mut c,
        json!({"text": "Noor keeps her passport in the blue folder.", "embedding": v(40, 41, 1.0)}),
    );
    let query = json!({"query": "passport folder", "top_k": 1, "embedding": v(40, 41, 1.0)});
    // Inside the read's transaction (which the worker cannot see yet): queued, not written.
    let mut t = c.transaction().unwrap();
    let found: Json<Value> = t
        .query_one("SELECT memory_query($1)", &[&Json(&query)])
        .unwrap()
        .get(0);
    assert_eq!(found.0["items"].as_array().map(Vec::len), Some(1));
    let inside = access(&mut t, &user);
    t.commit().unwrap();
    assert_eq!(
        inside,
        (0, 1),
        "the read wrote the memory instead of queueing"
    );
    let counted = poll(30, || (access(&mut c, &user) == (1, 0)).then_some(()));
    assert!(
        counted.is_some(),
        "the worker did not count the read: {:?}",
        access(&mut c, &user)
    );
    // Three more reads within the minute: queued, then counted as none.
    for _ in 0..3 {
        c.query_one("SELECT memory_query($1)", &[&Json(&query)])
            .unwrap();
    }
    let emptied = poll(30, || (access(&mut c, &user).1 == 0).then_some(()));
    assert!(emptied.is_some(), "the queue was not emptied");
    assert_eq!(
        access(&mut c, &user),
        (1, 0),
        "reads within the minute counted again"
    );
    c.batch_execute("RESET memory_ext.user_id").unwrap();
}

#[test]
fn the_worker_runs_the_ttl_sweep_on_its_interval_and_spares_pinned_and_important() {
    let _t = turn();
    let mut c = admin();
    assert!(worker_pid(&mut c, 30).is_some(), "no worker running");
    let user = tenant(&mut c, "ttl");
    write(
        &mut c,
        json!({"text": "Kai once owned a red scooter.", "importance": 2, "embedding": v(0, 1, 1.0)}),
    );
    write(
        &mut c,
        json!({"text": "Kai is allergic to peanuts.", "importance": 2, "pinned": true, "embedding": v(2, 3, 1.0)}),
    );
    write(
        &mut c,
        json!({"text": "Kai's sister is called Mira.", "importance": 4, "embedding": v(4, 5, 1.0)}),
    );
    let runs_before = status(&mut c, "ttl_sweep").0;
    // Time travel: nobody retrieved any of them for 61 days (memory_ext.ttl_days = 60).
    c.execute(
        "UPDATE memory.items SET last_accessed_at = now() - interval '61 days' WHERE user_id = $1",
        &[&user],
    )
    .unwrap();
    // No call from here: the worker's own schedule (ttl_interval 2 s) must do it.
    let swept = poll(20, || {
        let n = count(
            &mut c,
            "SELECT count(*) FROM memory.items WHERE user_id = $1 AND state = 'soft_deleted'",
            &user,
        );
        (n > 0).then_some(n)
    });
    assert_eq!(swept, Some(1), "the worker did not sweep");
    let gone: String = c
        .query_one(
            "SELECT text FROM memory.items WHERE user_id = $1 AND state = 'soft_deleted'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(gone, "Kai once owned a red scooter.");
    assert_eq!(
        count(
            &mut c,
            "SELECT count(*) FROM memory.history WHERE user_id = $1 AND event = 'TTL'",
            &user
        ),
        1
    );
    let (runs, counts, _) = status(&mut c, "ttl_sweep");
    assert!(runs > runs_before, "worker_status shows no new run");
    assert!(counts.is_some());
}

#[test]
fn rows_written_while_the_provider_was_down_are_backfilled_by_the_worker_alone() {
    let _t = turn();
    let mut c = admin();
    // A port nobody listens on yet: the provider is down.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    set_system(
        &mut c,
        &[
            ("memory_ext.embedding_provider", Some("openai")),
            (
                "memory_ext.embedding_url",
                Some(&format!("http://127.0.0.1:{port}/v1")),
            ),
            ("memory_ext.embedding_model", Some("mock-16")),
        ],
    );
    let mut c = admin();
    let user = tenant(&mut c, "backfill");
    for text in [
        "Kai moved to Lisbon in May.",
        "Kai works as a nurse.",
        "Kai plays the cello.",
    ] {
        write(&mut c, json!({ "text": text }));
    }
    let without = "SELECT count(*) FROM memory.items WHERE user_id = $1 AND embedding IS NULL";
    assert_eq!(count(&mut c, without, &user), 3, "the writes must be kept");
    assert_eq!(
        count(
            &mut c,
            "SELECT count(*) FROM memory.embedding_failures WHERE user_id = $1",
            &user
        ),
        3
    );

    // The provider comes up. Time travel past the first retry delay (60 s).
    let standin = StandIn::start(port);
    c.execute(
        "UPDATE memory.embedding_failures SET next_attempt_at = now() WHERE user_id = $1",
        &[&user],
    )
    .unwrap();
    let done = poll(30, || (count(&mut c, without, &user) == 0).then_some(()));
    assert!(done.is_some(), "the worker did not backfill");
    assert!(
        standin.hits("mock-16") >= 1,
        "the vectors came from somewhere else"
    );
    assert_eq!(
        count(
            &mut c,
            "SELECT count(*) FROM memory.embedding_failures WHERE user_id = $1",
            &user
        ),
        0
    );
    // The run is recorded when the job ends: after this tenant's rows, the model switch has it
    // re-embed every other row of the database (other tests' too) for up to a naptime first.
    let recorded = poll(30, || {
        let (runs, counts, _) = status(&mut c, "backfill");
        (runs >= 1 && counts?["embedded"].as_i64()? >= 1).then_some(())
    });
    assert!(
        recorded.is_some(),
        "no backfill run recorded: {:?}",
        status(&mut c, "backfill")
    );
    set_system(
        &mut c,
        &[
            ("memory_ext.embedding_provider", None),
            ("memory_ext.embedding_url", None),
            ("memory_ext.embedding_model", None),
        ],
    );
}

#[test]
fn a_worker_killed_with_sigkill_comes_back_and_works() {
    let _t = turn();
    let mut c = admin();
    let old = worker_pid(&mut c, 30).expect("no worker running");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &old.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // The postmaster treats it as a crash: every backend is reset, ours too.
    let new = poll(60, || {
        let mut c = admin();
        worker_pid(&mut c, 1).filter(|p| *p != old)
    });
    assert!(new.is_some(), "the worker did not come back");
    // And it works: a requested run is done.
    let mut c = admin();
    let runs = status(&mut c, "purge").0;
    c.execute("SELECT memory_worker_run('purge')", &[]).unwrap();
    // Answered: a run has ended since and the request is cleared (a run of the worker's own that
    // began before the request would end without answering it).
    let ran = poll(20, || {
        let r = c
            .query_one(
                "SELECT runs, requested_at IS NULL FROM memory.worker_status WHERE job = 'purge'",
                &[],
            )
            .unwrap();
        (r.get::<_, i64>(0) > runs && r.get::<_, bool>(1)).then_some(())
    });
    assert!(
        ran.is_some(),
        "the restarted worker did not run a requested job"
    );
    // The requested run itself ended well. last_error keeps the last failure on record, and the
    // kill may have cut short a purge of the worker's own (recorded as "interrupted" at restart,
    // before our run began), so the run is judged by when the last error was, not by whether one is.
    let failed_since: bool = c
        .query_one(
            "SELECT coalesce(last_error_at >= last_started_at, false) FROM memory.worker_status WHERE job = 'purge'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(
        !failed_since,
        "the requested run failed: {:?}",
        status(&mut c, "purge").2
    );
}

#[test]
fn stopping_the_server_during_consolidation_leaves_no_half_merged_pair() {
    let _t = turn();
    let standin = StandIn::start(0);
    let mut c = admin();
    slow_llm(&mut c, &standin);
    let users: Vec<String> = (0..3).map(|_| unique("stop")).collect();
    for u in &users {
        pairs(&mut c, u, 3);
    }
    c.execute("SELECT memory_worker_run('consolidate')", &[])
        .unwrap();
    // Stop as soon as the first of our tenants is committed: the next is in mid-run.
    let first = poll(60, || {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM memory.consolidation_runs WHERE user_id = ANY($1)",
                &[&users],
            )
            .unwrap()
            .get(0);
        (n > 0).then_some(())
    });
    assert!(first.is_some(), "consolidation did not start");
    drop(c);
    let stopping = Instant::now();
    stop_server();
    let stop_took = stopping.elapsed();
    start_server();
    let mut c = admin();
    // The worker reacts to SIGTERM at its next interrupt check: within one LLM call.
    assert!(
        stop_took < Duration::from_secs(20),
        "shutdown waited {stop_took:?}"
    );
    let mut whole = 0;
    let mut untouched = 0;
    for u in &users {
        let merged = count(
            &mut c,
            "SELECT count(*) FROM memory.items WHERE user_id = $1 AND state = 'soft_deleted'",
            u,
        );
        let events = count(
            &mut c,
            "SELECT count(*) FROM memory.history WHERE user_id = $1 AND event = 'MERGE'",
            u,
        );
        let same = count(
            &mut c,
            "SELECT count(*) FROM memory.consolidation_fingerprints WHERE user_id = $1 AND verdict = 'same'",
            u,
        );
        let edges_to_losers = count(
            &mut c,
            "SELECT count(*) FROM memory.relations r JOIN memory.items i
               ON i.user_id = r.user_id AND i.id IN (r.from_id, r.to_id)
             WHERE r.user_id = $1 AND i.state = 'soft_deleted'",
            u,
        );
        // All of a tenant's run or none of it.
        assert_eq!((events, same), (merged, merged), "tenant {u}");
        assert_eq!(edges_to_losers, 0, "tenant {u}");
        match merged {
            3 => whole += 1,
            0 => untouched += 1,
            n => panic!("tenant {u}: {n} of 3 pairs merged"),
        }
    }
    assert!(whole >= 1, "the first tenant's committed run was lost");
    assert!(untouched >= 1, "the stop came too late to test anything");
    slow_llm_off(&mut c);
}

#[test]
fn pg_cron_runs_memory_consolidate() {
    let _t = turn();
    let mut c = admin();
    c.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_cron")
        .unwrap();
    let user = unique("cron");
    pairs(&mut c, &user, 2);
    c.batch_execute("RESET memory_ext.user_id").unwrap();
    // The recipe of docs/operations.md "Scheduling with pg_cron" (one tenant here, so that other tests' tenants are left alone).
    let job: i64 = c
        .query_one(
            "SELECT cron.schedule($1, '* * * * *', format('SELECT memory_consolidate(%L)', $2::text))",
            &[&format!("memory-consolidate-{user}"), &user],
        )
        .unwrap()
        .get(0);
    // pg_cron 1.4 schedules by the minute.
    let run = poll(130, || {
        c.query_opt(
            "SELECT status, return_message FROM cron.job_run_details
             WHERE jobid = $1 AND status IN ('succeeded', 'failed') ORDER BY start_time LIMIT 1",
            &[&job],
        )
        .unwrap()
        .map(|r| (r.get::<_, String>(0), r.get::<_, Option<String>>(1)))
    });
    c.execute("SELECT cron.unschedule($1::bigint)", &[&job])
        .unwrap();
    let (status, message) = run.expect("pg_cron did not run the job within two minutes");
    assert_eq!(status, "succeeded", "{message:?}");
    // Without an LLM the deterministic rule merges each pair ("really" adds nothing).
    assert_eq!(
        count(
            &mut c,
            "SELECT count(*) FROM memory.items WHERE user_id = $1 AND state = 'soft_deleted'",
            &user
        ),
        2
    );
}

#[test]
fn scheduled_consolidation_runs_each_tenant_once_per_slot() {
    let _t = turn();
    let mut c = admin();
    let user = unique("sched");
    pairs(&mut c, &user, 2);
    // Nothing asks for it: the worker's own schedule. A tenant never consolidated is due at once
    // (its most recent slot has passed); after that, not before its next slot.
    set_system(
        &mut c,
        &[(
            "memory_ext.worker_jobs",
            Some("ttl_sweep,purge,consolidate,backfill"),
        )],
    );
    let ran = poll(30, || {
        c.query_opt(
            "SELECT last_run_at::text FROM memory.consolidation_runs WHERE user_id = $1",
            &[&user],
        )
        .unwrap()
        .map(|r| r.get::<_, String>(0))
    });
    let first_run = ran.expect("the worker did not consolidate the tenant by itself");
    let merged = "SELECT count(*) FROM memory.items WHERE user_id = $1 AND state = 'soft_deleted'";
    assert_eq!(count(&mut c, merged, &user), 2);
    // New near-duplicates now wait for tomorrow's slot.
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{user}'; SET memory_ext.link_threshold = 0.99"
    ))
    .unwrap();
    write(
        &mut c,
        json!({"text": "Kai likes oolong tea.", "importance": 2, "embedding": v(40, 41, 1.0)}),
    );
    write(
        &mut c,
        json!({"text": "Kai really likes oolong tea.", "importance": 2, "embedding": v(40, 41, 0.9)}),
    );
    std::thread::sleep(Duration::from_secs(4));
    let again: String = c
        .query_one(
            "SELECT last_run_at::text FROM memory.consolidation_runs WHERE user_id = $1",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(again, first_run, "consolidated twice in one slot");
    assert_eq!(count(&mut c, merged, &user), 2);
    // Back to what scripts/test.sh set (consolidation left to pg_cron and memory_worker_run).
    set_system(
        &mut c,
        &[("memory_ext.worker_jobs", Some("ttl_sweep,purge,backfill"))],
    );
}

/// A requested run that the worker's death cuts short is neither lost nor silent: the request
/// stays until a run answers it, the cut run is recorded as a failure, and the restarted
/// worker runs the job again.
#[test]
fn a_requested_run_cut_short_by_sigkill_is_recorded_and_run_again() {
    let _t = turn();
    let standin = StandIn::start(0);
    let mut c = admin();
    slow_llm(&mut c, &standin);
    let user = unique("cut");
    pairs(&mut c, &user, 2);
    let failures = |c: &mut Client| -> i64 {
        c.query_one(
            "SELECT failures FROM memory.worker_status WHERE job = 'consolidate'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let failures_before = failures(&mut c);
    let runs_before = status(&mut c, "consolidate").0;
    c.execute("SELECT memory_worker_run('consolidate')", &[])
        .unwrap();
    // The run has begun (and waits 3 s on the stand-in's first prompt).
    let started = poll(30, || {
        let r = c
            .query_one(
                "SELECT last_started_at >= requested_at FROM memory.worker_jobs WHERE job = 'consolidate'",
                &[],
            )
            .unwrap();
        r.get::<_, Option<bool>>(0).filter(|b| *b)
    });
    assert!(started.is_some(), "the requested run did not start");
    let pid = worker_pid(&mut c, 5).expect("no worker");
    drop(c);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // After the crash restart: the request is run again and answered.
    let answered = poll(120, || {
        let mut c = admin();
        let r = c
            .query_one(
                "SELECT runs, requested_at IS NULL FROM memory.worker_status WHERE job = 'consolidate'",
                &[],
            )
            .ok()?;
        (r.get::<_, i64>(0) > runs_before && r.get::<_, bool>(1)).then_some(())
    });
    assert!(
        answered.is_some(),
        "the cut-short request was not run again"
    );
    let mut c = admin();
    assert!(
        failures(&mut c) > failures_before,
        "the cut-short run left no failure on record"
    );
    let interrupted: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.consolidation_runs WHERE user_id = $1",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        interrupted, 1,
        "the tenant was not consolidated by the rerun"
    );
    slow_llm_off(&mut c);
}
