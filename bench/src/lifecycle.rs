//! `memory_ext_bench lifecycle`: the lifecycle jobs at scale.
//!
//! - Consolidation of one tenant with 10,000 and one with 100,000 memories, one in ten followed
//!   by a paraphrase (the same fact and number with a word added, cosine ~0.9: inside the band
//!   consolidation checks), without an LLM (the rule) and with the HTTP stand-in answering at
//!   once (so the figure is memory_ext's own cost plus the HTTP round trips), in their own
//!   database (`--lc-dsn`), loaded by SQL.
//! - memory_query latency on the 100k tenant with and without a consolidation running in
//!   another session.
//! - The TTL sweep and the purge over every memory of the query suite's database (`--dsn`,
//!   a million after `make bench`), with nothing expired and with 1 in 128 memories unseen for
//!   61 days (undone afterwards).

use crate::query::{pct, unit, Gen};
use postgres::types::Json;
use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// One memory in SHARE gets a paraphrase.
const SHARE: usize = 10;
const MODEL: &str = "builtin:all-MiniLM-L6-v2";

fn connect(dsn: &str) -> Client {
    Client::connect(dsn, NoTls).unwrap()
}

fn vtext(v: &[f32]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|x| format!("{x:.6}"))
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// Loads `n` memories (plus paraphrases) for `user` by SQL: staged with COPY, inserted with the
/// triggers on, the HNSW index built once afterwards by `build_index`.
fn load_tenant(db: &mut Client, user: &str, n: usize, seed: u64) -> usize {
    use std::io::Write;
    db.batch_execute(
        "DROP TABLE IF EXISTS lc_stage;
         CREATE UNLOGGED TABLE lc_stage (n bigint, text text, importance smallint, thread_id text, embedding text)",
    )
    .unwrap();
    let mut g = Gen::new(seed);
    let mut w = db
        .copy_in("COPY lc_stage FROM STDIN (FORMAT text)")
        .unwrap();
    let mut rows = 0;
    for i in 0..n {
        let (text, topic) = g.sentence();
        let v = g.vector(topic);
        let base = text.trim_end_matches('.');
        let thread = format!("{user}-t{}", g.rng.below(50));
        let imp = 1 + g.rng.below(3);
        writeln!(w, "{rows}\t{base} (#{i}).\t{imp}\t{thread}\t{}", vtext(&v)).unwrap();
        rows += 1;
        if i % SHARE == 0 {
            // cos(v, p) ~ 0.9: 0.9 v plus a random direction (nearly orthogonal in 384-d).
            let u = unit((0..v.len()).map(|_| g.rng.normal()).collect());
            let p = unit(v.iter().zip(&u).map(|(a, b)| 0.9 * a + 0.436 * b).collect());
            writeln!(
                w,
                "{rows}\t{base}, indeed (#{i}).\t{imp}\t{thread}\t{}",
                vtext(&p)
            )
            .unwrap();
            rows += 1;
        }
    }
    w.finish().unwrap();
    db.execute(
        &format!(
            "INSERT INTO memory.items (user_id, kind, category, text, importance, thread_id, embedding, embedding_model)
             SELECT $1, 'semantic', 'facts', text, importance, thread_id, embedding::vector, '{MODEL}'
             FROM lc_stage ORDER BY n"
        ),
        &[&user],
    )
    .unwrap();
    db.batch_execute("DROP TABLE lc_stage").unwrap();
    rows
}

fn consolidate(db: &mut Client, user: &str, max_pairs: i32) -> (f64, Value) {
    db.execute(
        "DELETE FROM memory.consolidation_usage WHERE user_id = $1",
        &[&user],
    )
    .unwrap();
    let t = Instant::now();
    let r: Json<Value> = db
        .query_one("SELECT memory_consolidate($1, $2)", &[&user, &max_pairs])
        .unwrap()
        .get(0);
    (t.elapsed().as_secs_f64() * 1e3, r.0)
}

/// `n` memory_query calls on `user` (vector supplied, top_k 5); p50/p95 in ms.
fn query_latency(dsn: &str, user: &str, n: usize) -> Value {
    let mut db = connect(dsn);
    db.batch_execute(&format!(
        "SET memory_ext.user_id = '{user}'; SET hnsw.iterative_scan = relaxed_order"
    ))
    .unwrap();
    let mut g = Gen::new(99);
    let mut ms = vec![];
    for i in 0..n + 10 {
        let (text, topic) = g.sentence();
        let v = g.vector(topic);
        let req = json!({"query": text, "top_k": 5, "return": "bullets", "embedding": v});
        let t = Instant::now();
        db.query_one("SELECT memory_query($1)", &[&Json(req)])
            .unwrap();
        if i >= 10 {
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    json!({"p50": pct(&mut ms, 50.0), "p95": pct(&mut ms, 95.0), "n": n})
}

pub fn run(dsn: &str, lc_dsn: &str, standin: &str) -> (Value, String) {
    let mut lc = connect(lc_dsn);
    let t0 = Instant::now();
    let n10 = load_tenant(&mut lc, "lc-10k", 10_000, 11);
    let n100 = load_tenant(&mut lc, "lc-100k", 100_000, 12);
    lc.batch_execute(&format!(
        "SET maintenance_work_mem = '1GB';
         SELECT memory._ensure_embedding_model('{MODEL}', 384);"
    ))
    .unwrap();
    lc.batch_execute("VACUUM ANALYZE memory.items").unwrap();
    let load_s = t0.elapsed().as_secs_f64();
    eprintln!("  loaded {n10} + {n100} memories in {load_s:.0} s");

    let mut runs = vec![];
    let mut md_rows = String::new();
    let llm_on = format!(
        "SET memory_ext.llm_url = '{standin}/v1'; SET memory_ext.llm_model = 'judge-same';
         SET memory_ext.consolidation_max_llm_calls = 1000"
    );
    let llm_off = "RESET memory_ext.llm_url; RESET memory_ext.llm_model";
    for (user, size, llm, max_pairs) in [
        ("lc-10k", n10, false, 50),
        ("lc-10k", n10, true, 50),
        ("lc-100k", n100, false, 50),
        ("lc-100k", n100, true, 50),
        ("lc-100k", n100, false, 500),
        ("lc-100k", n100, true, 500),
    ] {
        lc.batch_execute(if llm { &llm_on } else { llm_off })
            .unwrap();
        let (ms, counts) = consolidate(&mut lc, user, max_pairs);
        eprintln!("  consolidate {user} llm={llm} max_pairs={max_pairs}: {ms:.0} ms {counts}");
        md_rows += &format!(
            "| {size} | {} | {max_pairs} | {ms:.0} | {} | {} | {} | {} | {} |\n",
            if llm {
                "stand-in LLM (answers at once)"
            } else {
                "none (rule)"
            },
            counts["pairs_checked"],
            counts["merged"],
            counts["linked"],
            counts["skipped_fingerprinted"],
            counts["llm_calls"],
        );
        runs.push(json!({"user": user, "memories": size, "llm": llm, "max_pairs": max_pairs, "ms": ms, "counts": counts}));
    }
    lc.batch_execute(llm_off).unwrap();

    // memory_query on the 100k tenant, alone and while another session consolidates it over
    // and over (usage and fingerprints cleared each time, so every run does the full work).
    let quiet = query_latency(lc_dsn, "lc-100k", 200);
    let stop = Arc::new(AtomicBool::new(false));
    let busy = {
        let (stop, dsn) = (stop.clone(), lc_dsn.to_string());
        std::thread::spawn(move || {
            let mut db = connect(&dsn);
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                db.execute(
                    "DELETE FROM memory.consolidation_fingerprints WHERE user_id = 'lc-100k'",
                    &[],
                )
                .unwrap();
                consolidate(&mut db, "lc-100k", 500);
                n += 1;
            }
            n
        })
    };
    let during = query_latency(lc_dsn, "lc-100k", 200);
    stop.store(true, Ordering::Relaxed);
    let consolidations = busy.join().unwrap();

    // TTL sweep and purge over the query suite's data.
    let mut db = connect(dsn);
    let total: i64 = db
        .query_one("SELECT count(*) FROM memory.items", &[])
        .unwrap()
        .get(0);
    let timed = |db: &mut Client, sql: &str| {
        let t = Instant::now();
        let n: i64 = db.query_one(sql, &[]).unwrap().get(0);
        (t.elapsed().as_secs_f64() * 1e3, n)
    };
    let (sweep_none_ms, _) = timed(&mut db, "SELECT memory_ttl_sweep()");
    let (purge_ms, _) = timed(&mut db, "SELECT memory_purge()");
    db.batch_execute(
        "DROP TABLE IF EXISTS lc_aged;
         CREATE UNLOGGED TABLE lc_aged AS
             SELECT user_id, id, last_accessed_at FROM memory.items
             WHERE state = 'active' AND (hashtext(id::text) & 127) = 0;
         UPDATE memory.items i SET last_accessed_at = now() - interval '61 days'
         FROM lc_aged a WHERE i.user_id = a.user_id AND i.id = a.id;",
    )
    .unwrap();
    let aged: i64 = db
        .query_one("SELECT count(*) FROM lc_aged", &[])
        .unwrap()
        .get(0);
    let (sweep_ms, swept) = timed(&mut db, "SELECT memory_ttl_sweep()");
    db.batch_execute(
        "UPDATE memory.items i SET state = 'active', purge_at = NULL, last_accessed_at = a.last_accessed_at
         FROM lc_aged a WHERE i.user_id = a.user_id AND i.id = a.id;
         DROP TABLE lc_aged;",
    )
    .unwrap();
    eprintln!("  TTL over {total}: {sweep_none_ms:.0} ms (none due), {sweep_ms:.0} ms ({swept} of {aged} aged swept)");

    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let md = format!(
        "# Lifecycle jobs at scale\n\n\
         Release build, 2 cores, client on 127.0.0.1, one session per job (as the worker runs them).\n\n\
         ## Consolidation of one tenant\n\n\
         One memory in {SHARE} is followed by a paraphrase (same fact and number, a word added, cosine ~0.9). \
         Memories loaded by SQL in {load_s:.0} s. Each row is one `memory_consolidate(tenant, max_pairs)` call, in this order \
         on the same data (pairs checked earlier are fingerprinted and skipped; the day's usage is reset between calls). \
         A run takes 500 candidates (changed in 72 h, or important, or much retrieved; those not examined since they last changed first, \
         then the newest), each with 5 HNSW neighbours, so its cost does not grow with the tenant beyond the index lookups and the \
         candidate ordering, and successive runs move through the tenant.\n\n\
         | memories | LLM | max_pairs | ms | pairs checked | merged | linked | skipped (fingerprinted) | LLM calls |\n\
         |---|---|---|---|---|---|---|---|---|\n{md_rows}\n\
         ## memory_query during consolidation (tenant of {n100})\n\n\
         | | p50 ms | p95 ms |\n|---|---|---|\n\
         | alone (200 queries) | {:.2} | {:.2} |\n\
         | while another session consolidates the same tenant ({consolidations} runs of max_pairs 500, rule) | {:.2} | {:.2} |\n\n\
         ## TTL sweep and purge over {total} memories (all tenants, one statement each)\n\n\
         | | ms | rows |\n|---|---|---|\n\
         | memory_ttl_sweep(), nothing expired | {sweep_none_ms:.0} | 0 |\n\
         | memory_ttl_sweep(), {aged} memories (1 in 128) unseen for 61 days | {sweep_ms:.0} | {swept} soft-deleted (the rest pinned or important) |\n\
         | memory_purge(), nothing due | {purge_ms:.0} | 0 |\n",
        f(&quiet, "p50"),
        f(&quiet, "p95"),
        f(&during, "p50"),
        f(&during, "p95"),
    );
    let result = json!({
        "suite": "lifecycle", "load_s": load_s, "consolidation": runs,
        "query_alone_ms": quiet, "query_during_consolidation_ms": during, "consolidations_during": consolidations,
        "ttl": {"items": total, "sweep_nothing_due_ms": sweep_none_ms, "aged": aged, "sweep_ms": sweep_ms, "swept": swept, "purge_nothing_due_ms": purge_ms},
    });
    (result, md)
}
