//! `memory_ext_bench changes`: the change feed (docs/api.md "Change feed").
//!
//! - Notification latency: from the moment a writer asks for COMMIT to the moment a LISTEN
//!   client on another connection has the notification of that transaction (matched by its
//!   xid), over `RUNS` one-memory transactions, p50 and p95.
//! - What the feed costs a write: memory_write p50 with the feed's trigger on history and with
//!   it disabled (by the superuser this suite connects as), in alternation.
//! - memory_changes reading 100 changes from the start of a feed of a few hundred, p50.
//! - Webhook latency (when MEMORY_MCP_BIN names the gateway): from asking for COMMIT of a
//!   one-memory transaction to a local receiver having the gateway's post of that memory
//!   (docs/mcp.md "Webhooks"), over `WEBHOOK_RUNS` transactions one after another, p50 and p95.

use crate::query::pct;
use postgres::types::Json;
use postgres::{Client, GenericClient, NoTls};
use serde_json::{json, Value};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const RUNS: usize = 300;
const WEBHOOK_RUNS: usize = 100;
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

    let mut hook = std::env::var("MEMORY_MCP_BIN")
        .ok()
        .map(|bin| webhook_latency(dsn, &bin))
        .unwrap_or_default();
    let hooked = hook.len();
    let result = json!({
        "suite": "changes",
        "webhook_posts_timed": hooked,
        "webhook_p50_ms": (hooked > 0).then(|| pct(&mut hook, 50.0)),
        "webhook_p95_ms": (hooked > 0).then(|| pct(&mut hook, 95.0)),
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
    let md = if hooked > 0 {
        format!(
            "{md}\nWebhook: from asking for COMMIT of a one-memory transaction to a local receiver \
             having the gateway's post of it (`memory-mcp http`, release build; woken by the NOTIFY; \
             {hooked} of {WEBHOOK_RUNS} transactions timed, one after another).\n\n\
             | webhook p50 ms | webhook p95 ms |\n|---|---|\n| {:.2} | {:.2} |\n",
            result["webhook_p50_ms"].as_f64().unwrap_or(f64::NAN),
            result["webhook_p95_ms"].as_f64().unwrap_or(f64::NAN),
        )
    } else {
        md
    };
    (result, md)
}

/// A receiver on 127.0.0.1 that answers every post 200 and hands on the memory id of each
/// body with the instant it had it.
fn receiver() -> (u16, mpsc::Receiver<(String, Instant)>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = vec![];
            let mut chunk = [0u8; 4096];
            // Headers, then Content-Length bytes of body.
            let body = loop {
                let n = conn.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    break None;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break Some(buf[end + 4..end + 4 + len].to_vec());
                    }
                }
            };
            let at = Instant::now();
            let _ = conn
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            if let Some(b) = body.and_then(|b| serde_json::from_slice::<Value>(&b).ok()) {
                if b["type"] == "memory.insert" {
                    let _ = tx.send((b["data"]["id"].as_str().unwrap_or("").to_string(), at));
                }
            }
        }
    });
    (port, rx)
}

/// Commit-to-receiver latencies of `WEBHOOK_RUNS` one-memory transactions, in ms.
fn webhook_latency(dsn: &str, bin: &str) -> Vec<f64> {
    const ROLE: &str = "memory_webhook_bench";
    const USER: &str = "bench-webhook";
    let mut admin = Client::connect(dsn, NoTls).unwrap();
    let db_name: String = admin
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    admin
        .batch_execute(&format!(
            "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
                 CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOBYPASSRLS; END IF; END$$;
             GRANT CONNECT ON DATABASE \"{db_name}\" TO {ROLE};
             SET memory_ext.user_id = '{USER}';
             SELECT memory_agent('bench-webhook-agent', '{USER}');"
        ))
        .unwrap();
    let (port, arrivals) = receiver();
    let target = format!("127.0.0.1:{port}");
    let dir = std::env::temp_dir().join(format!("memory_webhook_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        json!({"dsn": format!("{dsn} user={ROLE}"),
               "listen": format!("127.0.0.1:{}", crate::mcp::free_port()),
               "webhook_targets": [target],
               "tenants": [{"token": "bench-webhook-token-0123456789", "user_id": USER,
                            "agent_id": "bench-webhook-agent",
                            "webhooks": [{"url": format!("http://{target}/hook"),
                                          "secret": "bench-webhook-secret-0123456789",
                                          "events": ["memory"]}]}]})
        .to_string(),
    )
    .unwrap();
    let _gateway = crate::mcp::Gateway(
        std::process::Command::new(bin)
            .args(["http", "--config", config.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e}")),
    );
    let mut writer = Client::connect(dsn, NoTls).unwrap();
    writer
        .batch_execute(&format!("SET memory_ext.user_id = '{USER}'"))
        .unwrap();
    // The webhook has started when it has its cursor.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n: i64 = writer
            .query_one(
                "SELECT count(*) FROM memory.webhook_cursors WHERE user_id = $1",
                &[&USER],
            )
            .unwrap()
            .get(0);
        if n > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the webhook did not start");
        thread::sleep(Duration::from_millis(100));
    }
    let mut out = vec![];
    for i in 0..WEBHOOK_RUNS {
        let mut t = writer.transaction().unwrap();
        let id: String = t
            .query_one(
                "SELECT memory_write($1) ->> 'id'",
                &[&Json(
                    json!({"text": format!("Webhook note {i}: a commit the receiver hears.")}),
                )],
            )
            .unwrap()
            .get(0);
        let t0 = Instant::now();
        t.commit().unwrap();
        while let Ok((got, at)) = arrivals.recv_timeout(Duration::from_secs(10)) {
            if got == id {
                out.push(at.duration_since(t0).as_secs_f64() * 1e3);
                break;
            }
        }
    }
    out
}
