//! `memory_ext_bench detail`: Layer-2 detail memory and memory files: memory_ref_store
//! and memory_ref_get of a 10 MB output, memory_capture of it, and memory_file_grep / _ls /
//! _search over 10,000 files of one tenant, through a real driver.

use crate::query::pct;
use postgres::types::Json;
use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn p(v: &mut [f64]) -> (f64, f64) {
    (pct(v, 50.0), pct(v, 95.0))
}

/// A build log of about `bytes` bytes: compile lines, some warnings, one error near the end.
fn log(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 200);
    let mut i = 0;
    while s.len() < bytes {
        if i % 97 == 0 {
            s.push_str(&format!(
                "warning: unused variable `x{i}` in src/module_{}.rs\n",
                i % 40
            ));
        } else {
            s.push_str(&format!("   Compiling crate-{i} v0.{}.{} (registry+https://github.com/rust-lang/crates.io-index)\n", i % 9, i % 13));
        }
        i += 1;
    }
    s.push_str("error[E0425]: cannot find value `y` in this scope\nerror: could not compile `app` due to 1 previous error\n");
    s
}

const TOPICS: [&str; 10] = [
    "the nightly backup of the orders database",
    "the staging cluster disk usage",
    "the SSH keys of the build workers",
    "the HDRPop ad campaign budget",
    "the migration of the billing tables",
    "the Grafana alerts for the API latency",
    "the onboarding checklist for new engineers",
    "the quarterly roadmap review",
    "the flaky integration tests in CI",
    "the customer feedback about search",
];

/// A markdown note of 1-2 KB about one topic.
fn note(i: usize) -> String {
    let t = TOPICS[i % TOPICS.len()];
    let mut s = format!("# Notes {i}: {t}\n\n");
    for k in 0..(8 + i % 8) {
        s.push_str(&format!(
            "- Item {k}: we discussed {t} on day {} and agreed to follow up with owner-{} by ticket OPS-{}.\n",
            i % 28 + 1,
            (i + k) % 17,
            1000 + (i * 7 + k) % 9000
        ));
    }
    s
}

pub fn run(dsn: &str, standin: &str) -> (Value, String) {
    let mut db = Client::connect(dsn, NoTls).unwrap();
    db.batch_execute("SET memory_ext.user_id = 'bench-detail'")
        .unwrap();
    let big = log(10_000_000);
    let chars = big.chars().count();
    let mut md = format!(
        "# Detail memory and memory files\n\nRelease build, 2 cores, Rust `postgres` driver on 127.0.0.1 (times include sending and receiving). \
         The 10 MB content is a synthetic build log of {} bytes ({chars} characters).\n\n",
        big.len()
    );

    // Detail memory: 10 MB stored 5 times (new keys), pages read from the start, middle, end.
    let mut store = vec![];
    let mut keys = vec![];
    for _ in 0..5 {
        let t = Instant::now();
        let r: Json<Value> = db
            .query_one("SELECT memory_ref_store($1, 'cargo build log')", &[&big])
            .unwrap()
            .get(0);
        store.push(ms(t));
        keys.push(r.0["key"].as_str().unwrap().to_string());
    }
    let key = &keys[0];
    let mut pages = vec![];
    for (label, off) in [("start", 0), ("middle", chars / 2), ("end", chars - 4000)] {
        let mut v = vec![];
        for _ in 0..50 {
            let t = Instant::now();
            let r: Json<Value> = db
                .query_one("SELECT memory_ref_get($1, $2, 4000)", &[key, &(off as i32)])
                .unwrap()
                .get(0);
            v.push(ms(t));
            assert_eq!(r.0["content"].as_str().unwrap().chars().count(), 4000);
        }
        let (a, b) = p(&mut v);
        pages.push(json!({"at": label, "offset": off, "p50_ms": a, "p95_ms": b}));
    }
    let mut whole = vec![];
    for _ in 0..3 {
        let t = Instant::now();
        let mut off: i32 = 0;
        let mut got = 0usize;
        loop {
            let r: Json<Value> = db
                .query_one("SELECT memory_ref_get($1, $2, 1000000)", &[key, &off])
                .unwrap()
                .get(0);
            got += r.0["content"].as_str().unwrap().len();
            match r.0["next_offset"].as_i64() {
                Some(n) => off = n as i32,
                None => break,
            }
        }
        assert_eq!(got, big.len());
        whole.push(ms(t));
    }
    let mut capture = vec![];
    for i in 0..3 {
        let t = Instant::now();
        let line: String = db
            .query_one(
                "SELECT memory_capture($1, $2)",
                &[&format!("cargo build --release -p app{i}"), &big],
            )
            .unwrap()
            .get(0);
        capture.push(ms(t));
        assert!(line.contains("Status: Failed"));
    }
    let mut small_capture = vec![];
    for i in 0..50 {
        let t = Instant::now();
        db.query_one(
            "SELECT memory_capture('ls', $1)",
            &[&format!("file{i}.txt other.txt")],
        )
        .unwrap();
        small_capture.push(ms(t));
    }
    let (s50, s95) = p(&mut store);
    let (w50, w95) = p(&mut whole);
    let (c50, c95) = p(&mut capture);
    let (sc50, sc95) = p(&mut small_capture);
    md += "## Detail memory (10 MB)\n\n| operation | runs | p50 ms | p95 ms |\n|---|---|---|---|\n";
    md += &format!("| memory_ref_store of 10 MB | 5 | {s50:.1} | {s95:.1} |\n");
    for pg in &pages {
        md += &format!(
            "| memory_ref_get, 4,000 characters at the {} (offset {}) | 50 | {:.2} | {:.2} |\n",
            pg["at"].as_str().unwrap(),
            pg["offset"],
            pg["p50_ms"].as_f64().unwrap(),
            pg["p95_ms"].as_f64().unwrap()
        );
    }
    md += &format!(
        "| whole 10 MB read back in pages of 1,000,000 characters | 3 | {w50:.1} | {w95:.1} |\n"
    );
    md += &format!("| memory_capture of the 10 MB output (stored, one line back) | 3 | {c50:.1} | {c95:.1} |\n");
    md += &format!(
        "| memory_capture of a small output (returned as is) | 50 | {sc50:.2} | {sc95:.2} |\n\n"
    );

    // Memory files: 10,000 notes of one tenant. Embedded by the HTTP stand-in (mock 384-d
    // vectors): the built-in model embeds 1-2 KB notes at ~5 per second on these 2 cores, and
    // what is measured here is the SQL side of files (grep, ls, search), not the model.
    db.batch_execute(&format!(
        "SET memory_ext.embedding_provider = 'openai'; SET memory_ext.embedding_url = '{standin}/v1';
         SET memory_ext.embedding_model = 'mock-384'; SET memory_ext.embed_on_write = off;"
    ))
    .unwrap();
    let t = Instant::now();
    let n = 10_000;
    for i in 0..n {
        db.query_one(
            "SELECT memory_file_write($1, $2, tags => $3)",
            &[
                &format!("notes/topic-{}/note-{i:05}.md", i % TOPICS.len()),
                &note(i),
                &vec![format!("topic-{}", i % TOPICS.len())],
            ],
        )
        .unwrap();
    }
    let write_s = t.elapsed().as_secs_f64();
    let bytes: i64 = db
        .query_one(
            "SELECT sum(octet_length(content))::bigint FROM memory.files",
            &[],
        )
        .unwrap()
        .get(0);
    let t = Instant::now();
    loop {
        let done: i64 = db
            .query_one("SELECT memory_reembed(256)", &[])
            .unwrap()
            .get(0);
        if done == 0 {
            break;
        }
    }
    let embed_s = t.elapsed().as_secs_f64();
    db.batch_execute("RESET memory_ext.embed_on_write; ANALYZE memory.files")
        .unwrap();
    let mut rows = String::new();
    let mut file_results = vec![];
    let cases: [(&str, &str); 6] = [
        (
            "grep, rare literal (1 file)",
            "SELECT count(*) FROM memory_file_grep('OPS-1234\\y', NULL, 50)",
        ),
        (
            "grep, common word, first 50 lines",
            "SELECT count(*) FROM memory_file_grep('backup', NULL, 50)",
        ),
        (
            "grep, case-insensitive alternation, 1000 lines",
            "SELECT count(*) FROM memory_file_grep('(?i)grafana|ssh', NULL, 1000)",
        ),
        (
            "grep, no match anywhere",
            "SELECT count(*) FROM memory_file_grep('kubernetes', NULL, 50)",
        ),
        (
            "ls of one directory (1,000 files)",
            "SELECT count(*) FROM memory_file_ls('notes/topic-3', 10000)",
        ),
        (
            "search (keyword + meaning), top 5",
            "SELECT count(*) FROM memory_file_search('who follows up on the database backup?')",
        ),
    ];
    for (label, sql) in cases {
        let mut v = vec![];
        let mut found = 0i64;
        for i in 0..23 {
            let t = Instant::now();
            found = db.query_one(sql, &[]).unwrap().get(0);
            if i >= 3 {
                v.push(ms(t));
            }
        }
        let (a, b) = p(&mut v);
        rows += &format!("| {label} | {found} | {a:.1} | {b:.1} |\n");
        file_results.push(json!({"case": label, "rows": found, "p50_ms": a, "p95_ms": b}));
    }
    md += &format!(
        "## Memory files (10,000 files, {:.1} MB, one tenant)\n\nWritten one by one without embeddings in {write_s:.1} s ({:.0} files/s), \
         then embedded by `memory_reembed` in {embed_s:.1} s through the HTTP stand-in (mock 384-d vectors; the built-in MiniLM \
         embeds notes this long at ~5/s on these 2 cores). Search embeds its query through the stand-in too. \
         20 timed runs each after 3 warm-up runs.\n\n\
         | operation | rows | p50 ms | p95 ms |\n|---|---|---|---|\n{rows}",
        bytes as f64 / 1e6,
        n as f64 / write_s
    );
    let result = json!({
        "suite": "detail", "content_bytes": big.len(), "content_chars": chars,
        "ref_store_ms": {"p50": s50, "p95": s95}, "ref_get_4000": pages,
        "read_all_pages_ms": {"p50": w50, "p95": w95}, "capture_10mb_ms": {"p50": c50, "p95": c95},
        "capture_small_ms": {"p50": sc50, "p95": sc95},
        "files": {"count": n, "bytes": bytes, "write_s": write_s, "embed_s": embed_s, "ops": file_results},
    });
    (result, md)
}
