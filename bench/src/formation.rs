//! `memory_ext_bench formation --standin URL`: what the application's calls cost while the
//! worker forms memories with a slow LLM. The worker is pointed at this database with the
//! `extract` and `episodes` jobs on; `message_append` and `run_end` are timed twice, first with no
//! LLM configured, then with the stand-in's `extract-slow-5000` (every LLM call takes 5 s) while
//! the worker extracts and ends runs on the same threads. If any of these calls waited for the
//! LLM, its p99 would be 5 s.

use crate::query::pct;
use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const THREADS: usize = 20;
const MESSAGES: usize = 25;

fn settle(c: &mut Client, settings: &[(&str, Option<&str>)]) {
    for (k, v) in settings {
        let sql = match v {
            Some(v) => format!("ALTER SYSTEM SET {k} = '{v}'"),
            None => format!("ALTER SYSTEM RESET {k}"),
        };
        c.batch_execute(&sql).unwrap();
    }
    c.batch_execute("SELECT pg_reload_conf()").unwrap();
    std::thread::sleep(Duration::from_secs(3));
}

/// One phase: THREADS threads of MESSAGES appends, each thread ended with run_end.
fn phase(dsn: &str, tag: &str) -> (Vec<f64>, Vec<f64>) {
    let mut c = Client::connect(dsn, NoTls).unwrap();
    c.batch_execute(&format!("SET memory_ext.user_id = 'bench-form-{tag}'"))
        .unwrap();
    let (mut appends, mut ends) = (vec![], vec![]);
    for t in 0..THREADS {
        let thread = format!("form-{tag}-{t}");
        for i in 0..MESSAGES {
            let (role, text) = if i % 2 == 0 {
                (
                    "user",
                    format!("I'm planning trip {t} to Porto and I live in Lisbon; note {i}."),
                )
            } else {
                (
                    "assistant",
                    format!("Noted, trip {t} step {i}: the hotel near the river."),
                )
            };
            let s = Instant::now();
            c.execute(
                "SELECT message_append($1, $2, $3)",
                &[&thread, &role, &text],
            )
            .unwrap();
            appends.push(s.elapsed().as_secs_f64() * 1e3);
            // An application's pace, so that the worker works while the calls are timed.
            std::thread::sleep(Duration::from_millis(20));
        }
        let s = Instant::now();
        c.execute("SELECT run_end($1, NULL, 2000)", &[&thread])
            .unwrap();
        ends.push(s.elapsed().as_secs_f64() * 1e3);
    }
    (appends, ends)
}

pub fn run(dsn: &str, standin: &str) -> (Value, String) {
    let mut admin = Client::connect(dsn, NoTls).unwrap();
    let db: String = admin
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    let url = format!("{standin}/v1");
    settle(
        &mut admin,
        &[
            ("memory_ext.database", Some(&db)),
            ("memory_ext.worker_jobs", Some("extract,episodes")),
            ("memory_ext.worker_naptime", Some("1s")),
            ("memory_ext.http_timeout_ms", Some("8000")),
        ],
    );
    // The worker restarts into this database 10 s after the reload.
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let on: bool = admin
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'memory_ext worker' AND datname = current_database())",
                &[],
            )
            .unwrap()
            .get(0);
        if on {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let (mut a0, mut e0) = phase(dsn, "nollm");
    settle(
        &mut admin,
        &[
            ("memory_ext.llm_url", Some(&url)),
            ("memory_ext.llm_model", Some("extract-slow-5000")),
        ],
    );
    let (mut a1, mut e1) = phase(dsn, "llm");
    // The worker was busy meanwhile: how many LLM calls it had made by the end of the phase.
    std::thread::sleep(Duration::from_secs(5));
    let calls: i64 = admin
        .query_one(
            "SELECT coalesce(sum(calls), 0)::bigint FROM memory.extraction_usage WHERE user_id = 'bench-form-llm'",
            &[],
        )
        .unwrap()
        .get(0);
    settle(
        &mut admin,
        &[
            ("memory_ext.llm_url", None),
            ("memory_ext.llm_model", None),
            ("memory_ext.database", None),
            ("memory_ext.worker_jobs", None),
            ("memory_ext.worker_naptime", None),
            ("memory_ext.http_timeout_ms", None),
        ],
    );
    let row = |name: &str, v0: &mut Vec<f64>, v1: &mut Vec<f64>| {
        let (p50a, p99a, p50b, p99b) = (pct(v0, 50.0), pct(v0, 99.0), pct(v1, 50.0), pct(v1, 99.0));
        (
            format!(
                "| `{name}` | {} | {p50a:.2} | {p99a:.2} | {p50b:.2} | {p99b:.2} |\n",
                v0.len()
            ),
            json!({"call": name, "calls": v0.len(), "no_llm_ms": {"p50": p50a, "p99": p99a},
                   "llm_5s_ms": {"p50": p50b, "p99": p99b}}),
        )
    };
    let (r1, j1) = row("message_append", &mut a0, &mut a1);
    let (r2, j2) = row("run_end", &mut e0, &mut e1);
    let md = format!(
        "# Formation: the application's calls while the worker extracts and ends runs with a slow LLM\n\n\
         Release build, 2 cores, 127.0.0.1. {THREADS} threads of {MESSAGES} messages, each ended \
         with `run_end(thread, NULL, 2000)`, timed from a client at one call per 20 ms; the worker serves this database \
         with the jobs `extract,episodes` (naptime 1 s). First with no LLM, then with the stand-in's \
         `extract-slow-5000` (every LLM call takes 5 s); the worker made {calls} extraction calls \
         during and just after the second phase.\n\n\
         | call | calls | no LLM p50 ms | p99 ms | LLM of 5 s p50 ms | p99 ms |\n|---|---|---|---|---|---|\n{r1}{r2}"
    );
    (
        json!({"suite": "formation", "llm_calls": calls, "results": [j1, j2]}),
        md,
    )
}
