//! `memory_ext_bench changes`: the change feed (docs/api.md "Change feed").
//!
//! - Notification latency: from the moment a writer asks for COMMIT to the moment a LISTEN
//!   client on another connection has the notification of that transaction (matched by its
//!   xid), over `RUNS` one-memory transactions, p50 and p95.
//! - What the feed costs a write: memory_write p50 with the feed's trigger on history and with
//!   it disabled (by the superuser this suite connects as), in alternation.
//! - memory_changes reading 100 changes from the start of a feed of a few hundred, p50.

use crate::query::pct;
use postgres::types::Json;
use postgres::{Client, GenericClient, NoTls};
use serde_json::{json, Value};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const RUNS: usize = 300;
const TENANT: &str = "bench-changes";

/// One memory_write, on a connection or in a transaction.
fn write(db: &mut impl GenericClient, text: String) {
    db.query_one("SELECT memory_write($1)", &[&Json(json!({ "text": text }))])
        .unwrap();
}

pub fn run(dsn: &str) -> (Value, String) {
    let set = format!("SET memory_ext.user_id = '{TENANT}'");
    let mut writer = Client::connect(dsn, NoTls).unwrap();
    writer.batch_execute(&set).unwrap();
    let mut listener = Client::connect(dsn, NoTls).unwrap();
    listener.batch_execute(&set).unwrap();
    let tag: String = listener
        .query_one("SELECT memory_changes() -> 'tags' ->> 0", &[])
        .unwrap()
        .get(0);
    listener.batch_execute("LISTEN memory_ext_changes").unwrap();

    // The listener hands each of its tenant's notifications, with the instant it had it, to
    // the writer's side.
    let (tx, rx) = mpsc::channel::<(String, Instant)>();
    let heard = thread::spawn(move || {
        let mut n = listener.notifications();
        let mut it = n.timeout_iter(Duration::from_secs(5));
        let mut got = 0;
        while got < RUNS {
            match postgres::fallible_iterator::FallibleIterator::next(&mut it) {
                Ok(Some(note)) => {
                    let at = Instant::now();
                    let p: Value = serde_json::from_str(note.payload()).unwrap_or_default();
                    if p["owner"] == tag.as_str() {
                        got += 1;
                        tx.send((p["xid"].as_str().unwrap_or("").to_string(), at))
                            .unwrap();
                    }
                }
                _ => break,
            }
        }
    });
    let mut asked = std::collections::HashMap::new();
    for i in 0..RUNS {
        let mut t = writer.transaction().unwrap();
        write(
            &mut t,
            format!("Listened note {i}: a commit the listener hears."),
        );
        let xid: String = t
            .query_one("SELECT pg_current_xact_id()::text", &[])
            .unwrap()
            .get(0);
        asked.insert(xid, Instant::now());
        t.commit().unwrap();
    }
    heard.join().unwrap();
    let mut latency: Vec<f64> = rx
        .try_iter()
        .filter_map(|(xid, at)| {
            asked
                .get(&xid)
                .map(|t0| at.duration_since(*t0).as_secs_f64() * 1e3)
        })
        .collect();
    let heard_n = latency.len();
    assert!(heard_n > 0, "the listener heard none of the {RUNS} commits");

    // What the feed's trigger costs a memory_write.
    let mut on = vec![];
    let mut off = vec![];
    for i in 0..RUNS {
        for (feed, out) in [(true, &mut on), (false, &mut off)] {
            writer
                .batch_execute(&format!(
                    "ALTER TABLE memory.history {} TRIGGER history_change",
                    if feed { "ENABLE" } else { "DISABLE" }
                ))
                .unwrap();
            let t = Instant::now();
            let n = RUNS + 2 * i + usize::from(feed);
            write(
                &mut writer,
                format!("Bench note {n}: the feed measures what a write costs."),
            );
            out.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    writer
        .batch_execute("ALTER TABLE memory.history ENABLE TRIGGER history_change")
        .unwrap();

    let mut read = vec![];
    for _ in 0..100 {
        let t = Instant::now();
        writer
            .query_one("SELECT memory_changes(NULL, 100)", &[])
            .unwrap();
        read.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let feed_rows: i64 = writer
        .query_one(
            "SELECT count(*) FROM memory.changes WHERE user_id = $1",
            &[&TENANT],
        )
        .unwrap()
        .get(0);

    let result = json!({
        "suite": "changes",
        "transactions": RUNS,
        "notifications_heard": heard_n,
        "notify_p50_ms": pct(&mut latency, 50.0),
        "notify_p95_ms": pct(&mut latency, 95.0),
        "write_p50_ms_with_feed": pct(&mut on, 50.0),
        "write_p50_ms_without_feed": pct(&mut off, 50.0),
        "read_100_p50_ms": pct(&mut read, 50.0),
        "feed_rows": feed_rows,
    });
    let md = format!(
        "# Change feed\n\nClient: Rust `postgres` driver over TCP on 127.0.0.1, one tenant, release build. \
         Notify: from asking for COMMIT of a one-memory transaction to a LISTEN client on another \
         connection having its notification ({RUNS} transactions, {heard_n} heard). Write: memory_write \
         with the feed's trigger on history and with it disabled, {RUNS} each, in alternation. Read: \
         memory_changes(NULL, 100) over a feed of {feed_rows} rows.\n\n\
         | notify p50 ms | notify p95 ms | memory_write p50 ms with feed | without feed | memory_changes 100 p50 ms |\n\
         |---|---|---|---|---|\n| {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
        result["notify_p50_ms"].as_f64().unwrap(),
        result["notify_p95_ms"].as_f64().unwrap(),
        result["write_p50_ms_with_feed"].as_f64().unwrap(),
        result["write_p50_ms_without_feed"].as_f64().unwrap(),
        result["read_100_p50_ms"].as_f64().unwrap(),
    );
    (result, md)
}
