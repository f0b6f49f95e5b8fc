//! `memory_ext_bench checkpoint`: checkpoint_save / checkpoint_load latency for states of 1 KB,
//! 100 KB and 10 MB (docs/design.md "Checkpoints": < 100 ms), one
//! thread per size, saved over and over (each save replaces the row), through a real driver.

use crate::query::pct;
use postgres::types::Json;
use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::time::Instant;

/// A JSON state of about `bytes` bytes shaped like an agent checkpoint (messages with text).
fn state(bytes: usize, step: usize) -> Value {
    let msg = "The user asked about the trip to Porto and the budget for the hotel; ";
    let n = (bytes / (msg.len() + 40)).max(1);
    json!({
        "step": step,
        "messages": (0..n).map(|i| json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "content": format!("{msg}{i}")})).collect::<Vec<_>>(),
    })
}

pub fn run(dsn: &str) -> (Value, String) {
    let mut db = Client::connect(dsn, NoTls).unwrap();
    db.batch_execute("SET memory_ext.user_id = 'bench-checkpoints'")
        .unwrap();
    let mut rows = String::new();
    let mut out = vec![];
    for (label, bytes, n) in [
        ("1 KB", 1_000, 300),
        ("100 KB", 100_000, 100),
        ("10 MB", 10_000_000, 10),
    ] {
        let thread = format!("cp-{bytes}");
        let states: Vec<Value> = (0..3).map(|s| state(bytes, s)).collect();
        let size = serde_json::to_string(&states[0]).unwrap().len();
        let (mut save, mut load) = (vec![], vec![]);
        for i in 0..n + 3 {
            let s = &states[i % states.len()];
            let t = Instant::now();
            db.query_one("SELECT checkpoint_save(NULL, $1, $2)", &[&thread, &Json(s)])
                .unwrap();
            let save_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let back: Json<Value> = db
                .query_one("SELECT checkpoint_load(NULL, $1)", &[&thread])
                .unwrap()
                .get(0);
            let load_ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(back.0["step"], s["step"]);
            if i >= 3 {
                save.push(save_ms);
                load.push(load_ms);
            }
        }
        let s = |v: &mut Vec<f64>| (pct(v, 50.0), pct(v, 95.0));
        let ((s50, s95), (l50, l95)) = (s(&mut save), s(&mut load));
        rows += &format!("| {label} ({size} bytes of JSON) | {n} | {s50:.2} | {s95:.2} | {l50:.2} | {l95:.2} |\n");
        out.push(json!({"size": label, "json_bytes": size, "runs": n,
            "save_ms": {"p50": s50, "p95": s95}, "load_ms": {"p50": l50, "p95": l95}}));
    }
    let md = format!(
        "# Checkpoints\n\nRelease build, 2 cores, Rust `postgres` driver on 127.0.0.1 (times include sending and receiving the JSON). \
         Each save replaces the thread's row; each load reads it back.\n\n\
         | state | runs | save p50 ms | save p95 ms | load p50 ms | load p95 ms |\n|---|---|---|---|---|---|\n{rows}"
    );
    (json!({"suite": "checkpoint", "results": out}), md)
}
