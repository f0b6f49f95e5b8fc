//! `memory_ext_bench <suite> --dsn DSN --standin URL --out DIR`: runs a benchmark suite against
//! a server with memory_ext installed and writes `<suite>.md` and `<suite>.json` to DIR.
//! Suites: `embed` (embedding throughput), `eval` (retrieval quality, `--data FILE [--ablation] [--shapes turns,bare,facts]`),
//! `query` (`--items N [--api-load N] [--partitions]`: memories loaded through the API up to
//! --api-load, by SQL beyond; --partitions also measures an unpartitioned copy; --load-only
//! loads and stops, for a later run on the loaded data), `lifecycle` (`--lc-dsn DSN`: a database of its own for consolidation),
//! `checkpoint`, `detail` (detail memory and memory files), `formation` (the application's calls
//! while the worker extracts with a slow LLM), `mcp`, `latency` (`--items N`: N queries of
//! the query suite over data already loaded, printed, for profiling). Timings are wall clock from the client, through a real driver.

mod changes;
mod checkpoint;
mod detail;
mod eval;
mod formation;
mod lifecycle;
mod mcp;
mod precision;
mod query;
mod routed;
mod spaces;
mod tools;

use postgres::{Client, NoTls};
use serde_json::json;
use std::time::Instant;

mod stats {
    /// p-th percentile (0..100) of durations in ms, nearest-rank.
    pub fn pct(v: &mut [f64], p: f64) -> f64 {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let i = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize - 1;
        v[i.min(v.len() - 1)]
    }
}

struct Args {
    suite: String,
    dsn: String,
    standin: String,
    out: String,
    data: String,
    ablation: bool,
    items: usize,
    api_load: usize,
    partitions: bool,
    load_only: bool,
    reuse: bool,
    lc_dsn: String,
    shapes: Vec<String>,
}

fn args() -> Args {
    let mut a = std::env::args().skip(1);
    let suite = a.next().expect("suite");
    let (mut dsn, mut standin, mut out, mut data, mut ablation) = (
        String::new(),
        String::new(),
        "bench/results".to_string(),
        String::new(),
        false,
    );
    let mut items = 100_000;
    let mut api_load = query::API_LOAD;
    let mut partitions = false;
    let mut load_only = false;
    let mut reuse = false;
    let mut lc_dsn = String::new();
    let mut shapes = vec![];
    while let Some(k) = a.next() {
        if k == "--ablation" {
            ablation = true;
            continue;
        }
        if k == "--load-only" {
            load_only = true;
            continue;
        }
        if k == "--partitions" {
            partitions = true;
            continue;
        }
        if k == "--reuse" {
            reuse = true;
            continue;
        }
        let v = a.next().expect("value");
        match k.as_str() {
            "--dsn" => dsn = v,
            "--standin" => standin = v,
            "--out" => out = v,
            "--data" => data = v,
            "--items" => items = v.parse().expect("--items N"),
            "--api-load" => api_load = v.parse().expect("--api-load N"),
            "--lc-dsn" => lc_dsn = v,
            "--shapes" => {
                shapes = v
                    .split([',', ' '])
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            _ => panic!("unknown option {k}"),
        }
    }
    Args {
        suite,
        dsn,
        standin,
        out,
        data,
        ablation,
        items,
        api_load,
        partitions,
        load_only,
        reuse,
        lc_dsn,
        shapes,
    }
}

fn sentences(n: usize) -> Vec<String> {
    let subjects = [
        "The user",
        "Ana",
        "The team",
        "Our agent",
        "The customer",
        "My manager",
    ];
    let verbs = [
        "prefers",
        "asked about",
        "decided on",
        "mentioned",
        "is planning",
        "wants",
    ];
    let objects = [
        "concise answers with examples",
        "a trip to Porto in May",
        "migrating the database to Postgres 16",
        "green tea instead of coffee",
        "shipping version one by September",
        "a weekly summary every Friday morning",
    ];
    (0..n)
        .map(|i| {
            format!(
                "{} {} {} (note {i}).",
                subjects[i % 6],
                verbs[(i / 6) % 6],
                objects[(i / 36) % 6]
            )
        })
        .collect()
}

fn rss_kb(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Embedding throughput and cold-start cost for the session's configured provider.
fn embed_suite(dsn: &str, setup: &str) -> serde_json::Value {
    // Cold start: fresh backends, first call.
    let mut first_ms = vec![];
    let mut rss_added = vec![];
    for _ in 0..3 {
        let mut c = Client::connect(dsn, NoTls).unwrap();
        c.batch_execute(setup).unwrap();
        let pid: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
        let before = rss_kb(pid);
        let t = Instant::now();
        c.execute("SELECT memory_embed('warm up the model')", &[])
            .unwrap();
        first_ms.push(t.elapsed().as_secs_f64() * 1e3);
        rss_added.push((rss_kb(pid).saturating_sub(before)) as f64 / 1024.0);
    }
    let mut c = Client::connect(dsn, NoTls).unwrap();
    c.batch_execute(setup).unwrap();
    c.execute("SELECT memory_embed('warm up')", &[]).unwrap();
    // Single short texts, one call each.
    let texts = sentences(200);
    let mut single = vec![];
    let t0 = Instant::now();
    for t in &texts {
        let t1 = Instant::now();
        c.execute("SELECT memory_embed($1)", &[t]).unwrap();
        single.push(t1.elapsed().as_secs_f64() * 1e3);
    }
    let single_rate = texts.len() as f64 / t0.elapsed().as_secs_f64();
    // Batches of 32 in one call.
    let batch: Vec<String> = sentences(32 * 20);
    let t0 = Instant::now();
    let mut batch_ms = vec![];
    for chunk in batch.chunks(32) {
        let t1 = Instant::now();
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM memory_embed_batch($1)",
                &[&chunk.to_vec()],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, 32);
        batch_ms.push(t1.elapsed().as_secs_f64() * 1e3);
    }
    let batch_rate = batch.len() as f64 / t0.elapsed().as_secs_f64();
    json!({
        "first_call_ms_median": stats::pct(&mut first_ms, 50.0),
        "rss_added_mb_median": stats::pct(&mut rss_added, 50.0),
        "single_per_s": single_rate,
        "single_p50_ms": stats::pct(&mut single, 50.0),
        "single_p95_ms": stats::pct(&mut single, 95.0),
        "batch32_per_s": batch_rate,
        "batch32_call_p50_ms": stats::pct(&mut batch_ms, 50.0),
    })
}

/// Writes `<name>.md` and `<name>.json` to `out` and prints the markdown.
fn save(out: &str, name: &str, result: &serde_json::Value, md: &str) {
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(format!("{out}/{name}.md"), md).unwrap();
    std::fs::write(
        format!("{out}/{name}.json"),
        serde_json::to_string_pretty(result).unwrap(),
    )
    .unwrap();
    print!("{md}");
}

fn main() {
    let a = args();
    match a.suite.as_str() {
        "embed" => {
            let builtin = embed_suite(&a.dsn, "SET memory_ext.embedding_provider = 'builtin'");
            let http = embed_suite(
                &a.dsn,
                &format!(
                    "SET memory_ext.embedding_provider = 'openai'; SET memory_ext.embedding_url = '{}/v1';
                     SET memory_ext.embedding_model = 'mock-384';",
                    a.standin
                ),
            );
            let result = json!({ "suite": "embed", "builtin": builtin, "http_standin": http });
            let row = |name: &str, r: &serde_json::Value| {
                format!(
                    "| {name} | {:.0} | {:.2} | {:.2} | {:.0} | {:.1} | {:.0} | {:.0} |\n",
                    r["single_per_s"].as_f64().unwrap(),
                    r["single_p50_ms"].as_f64().unwrap(),
                    r["single_p95_ms"].as_f64().unwrap(),
                    r["batch32_per_s"].as_f64().unwrap(),
                    r["batch32_call_p50_ms"].as_f64().unwrap(),
                    r["first_call_ms_median"].as_f64().unwrap(),
                    r["rss_added_mb_median"].as_f64().unwrap(),
                )
            };
            let md = format!(
                "# Embedding benchmark\n\nClient: Rust `postgres` driver over TCP on 127.0.0.1; each figure through `SELECT memory_embed(...)` / \
                 `memory_embed_batch(...)`. Single: 200 short sentences, one call each. Batch: 20 calls of 32. First call and RSS: \
                 median of 3 fresh backends (VmRSS from /proc before and after the first call).\n\n\
                 | provider | single /s | single p50 ms | single p95 ms | batch-32 /s | batch-32 call p50 ms | first call ms | RSS added MB |\n\
                 |---|---|---|---|---|---|---|---|\n{}{}",
                row("builtin (MiniLM, in-process)", &result["builtin"]),
                row("openai API via HTTP stand-in (mock, 384-d)", &result["http_standin"]),
            );
            save(&a.out, "embed", &result, &md);
        }
        "eval" => eval::run(&a.dsn, &a.data, &a.out, a.ablation, a.reuse, &a.shapes),
        "query" => query_suite(&a),
        // The query half of the query suite alone, on data already loaded (for profiling runs):
        // prints its JSON, writes no result file.
        "latency" => println!(
            "{}",
            serde_json::to_string_pretty(&query::query_latency(&a.dsn, a.items)).unwrap()
        ),
        "changes" => {
            let (result, md) = changes::run(&a.dsn);
            save(&a.out, "changes", &result, &md);
        }
        "routed" => {
            let (result, md) = routed::run(&a.dsn);
            save(&a.out, "routed", &result, &md);
        }
        "precision" => {
            // 400 timed queries on each side; the memories are the query suite's.
            let (result, md) = precision::run(&a.dsn, 400);
            let name = format!("precision-{}", result["memories"]);
            save(&a.out, &name, &result, &md);
        }
        "spaces" => {
            let (result, md) = spaces::run(&a.dsn, a.items);
            save(&a.out, "spaces", &result, &md);
        }
        "checkpoint" => {
            let (result, md) = checkpoint::run(&a.dsn);
            save(&a.out, "checkpoint", &result, &md);
        }
        "detail" => {
            let (result, md) = detail::run(&a.dsn, &a.standin);
            save(&a.out, "detail", &result, &md);
        }
        "lifecycle" => {
            let (result, md) = lifecycle::run(&a.dsn, &a.lc_dsn, &a.standin);
            save(&a.out, "lifecycle", &result, &md);
        }
        "tools" => {
            let (result, md) = tools::run(&a.dsn);
            save(&a.out, "tools", &result, &md);
        }
        "mcp" => {
            let (result, md) = mcp::run(&a.dsn);
            save(&a.out, "mcp", &result, &md);
        }
        "formation" => {
            let (result, md) = formation::run(&a.dsn, &a.standin);
            save(&a.out, "formation", &result, &md);
        }
        s => panic!("unknown suite {s}"),
    }
}

/// Retrieval and writes at `--items` memories (100 tenants): see query.rs.
fn query_suite(a: &Args) {
    let mut db = Client::connect(&a.dsn, NoTls).unwrap();
    let have: i64 = db
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id LIKE 'bench-%'",
            &[],
        )
        .unwrap()
        .get(0);
    let mut load_rate = None;
    let mut fill_s = None;
    // Through the API up to --api-load (where the load rate is measured), by SQL beyond.
    let api = a.items.min(a.api_load).saturating_sub(have as usize);
    if api > 0 {
        eprintln!("loading {api} memories through memory_write_batch ({have} there)");
        load_rate = Some(query::load(&a.dsn, api, 2));
    }
    let sql = a.items.saturating_sub((have as usize).max(a.api_load));
    if sql > 0 {
        eprintln!("filling {sql} memories by SQL");
        fill_s = Some(query::fill(&a.dsn, sql));
    }
    if api + sql > 0 {
        db.batch_execute("VACUUM ANALYZE memory.items").unwrap();
    }
    if a.load_only {
        eprintln!(
            "loaded (load rate {load_rate:?}/s, SQL fill {fill_s:?} s); --load-only: no figures"
        );
        return;
    }
    // Steady state, not the flush of a load: right after a fill, the checkpointer writes
    // gigabytes of dirty buffers in the background, and query latencies measured meanwhile
    // had a tail of 40-100 ms that the same queries do not have a minute later.
    db.batch_execute("CHECKPOINT").unwrap();
    // The same state as a run on kept data after a restart (scripts/bench.sh): indexes in shared
    // buffers, tables in the OS cache. (pg_prewarm is created by bench.sh.)
    db.batch_execute(
        "SELECT count(pg_prewarm(c.oid, CASE WHEN c.relkind = 'i' THEN 'buffer' ELSE 'read' END))
         FROM pg_class c WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'i')",
    )
    .unwrap();
    let total: i64 = db
        .query_one("SELECT count(*) FROM memory.items", &[])
        .unwrap()
        .get(0);
    eprintln!("querying over {total} memories");
    let q = query::query_latency(&a.dsn, 300);
    let w1 = query::write_latency(&a.dsn, 300, 1, true);
    let w4 = query::write_latency(&a.dsn, 200, 4, true);
    let e1 = query::write_latency(&a.dsn, 100, 1, false);
    let e4 = query::write_latency(&a.dsn, 50, 4, false);
    let raw = query::raw_insert(&a.dsn, 100_000, 300);
    // The bulk path at this size, and the ceiling pgvector alone sets on it at the size of one
    // partition's HNSW graph (a tenant's memories are in one of 16).
    let bulk = query::bulk_write(&a.dsn, 4_000, 2);
    let part_rows = (total / 16).max(1_000);
    let raw_bulk = query::raw_bulk_insert(&a.dsn, part_rows, 4_000, 2);
    let flat = a.partitions.then(|| query::flat_latency(&a.dsn, 300));
    let result = json!({
        "suite": "query", "items": total, "tenants": query::TENANTS, "bulk_load_per_s": load_rate,
        "query": q, "write_supplied_vectors_1_client": w1, "write_supplied_vectors_4_clients": w4,
        "write_with_embedding_1_client": e1, "write_with_embedding_4_clients": e4,
        "raw_pgvector_insert_1_client": raw, "sql_fill_s": fill_s,
        "bulk_write_2_clients": bulk, "raw_pgvector_bulk_insert_2_clients": raw_bulk,
        "partitions": flat,
    });
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let md = format!(
        "# Retrieval and write performance at {total} memories ({} tenants)\n\n\
         Release build, 2 cores, client on 127.0.0.1. Vectors supplied (384-d, clustered around 50 topics) unless said.\n\n\
         | query (300 runs x 3 rounds, pooled) | p50 ms | p95 ms | p99 ms |\n|---|---|---|---|\n\
         | raw pgvector: tenant + filter, ORDER BY <=> LIMIT 5, memory_query's planner settings | {:.2} | {:.2} | {:.2} |\n\
         | raw pgvector, default planner settings (the reference before 0.10.0) | {:.2} | {:.2} | {:.2} |\n\
         | hand-written hybrid SQL: vector top 20 and full-text top 20 (ts_rank_cd, OR of the query's words) fused by reciprocal rank, one statement | {:.2} | {:.2} | {:.2} |\n\
         | memory_query (bullets, top_k 5, filter on, vector supplied) | {:.2} | {:.2} | {:.2} |\n\
         | memory_query end to end (built-in model embeds the query) | {:.2} | {:.2} | {:.2} |\n\
         | memory_query end to end, \"rerank\": true, top_k 5, reranker reads 5 (every 4th query) | {:.2} | {:.2} | {:.2} |\n\
         | memory_query end to end, \"rerank\": true, top_k 5, reranker reads 10, the default depth (every 4th query) | {:.2} | {:.2} | {:.2} |\n\n\
         p95 ratio memory_query / raw pgvector: {:.2}; memory_query / hand-written hybrid SQL: {:.2}\n{}\n\
         | memory_write | clients | writes/s | p50 ms | p95 ms |\n|---|---|---|---|---|\n\
         | supplied vectors | 1 | {:.0} | {:.2} | {:.2} |\n| supplied vectors | 4 | {:.0} | {:.2} | {:.2} |\n\
         | built-in embedding | 1 | {:.0} | {:.2} | {:.2} |\n| built-in embedding | 4 | {:.0} | {:.2} | {:.2} |\n\
         | reference: raw pgvector INSERT, HNSW-indexed table of 100k (no memory_ext) | 1 | {:.0} | {:.2} | {:.2} |\n\
         | bulk path (memory_write_batch, calls of 500, supplied vectors, dedupe on) at this size | 2 | {:.0} | | |\n\
         | reference: raw pgvector bulk INSERT (statements of 500) into an HNSW-indexed table of {} rows, one partition's size | 2 | {:.0} | | |\n\n\
         Bulk load of the first memories (memory_write_batch, batches of 500, 2 clients): {}\n{}{}",
        query::TENANTS,
        f(&q["raw_pgvector_ms"], "p50"), f(&q["raw_pgvector_ms"], "p95"), f(&q["raw_pgvector_ms"], "p99"),
        f(&q["raw_pgvector_default_planner_ms"], "p50"), f(&q["raw_pgvector_default_planner_ms"], "p95"), f(&q["raw_pgvector_default_planner_ms"], "p99"),
        f(&q["hybrid_sql_ms"], "p50"), f(&q["hybrid_sql_ms"], "p95"), f(&q["hybrid_sql_ms"], "p99"),
        f(&q["memory_query_ms"], "p50"), f(&q["memory_query_ms"], "p95"), f(&q["memory_query_ms"], "p99"),
        f(&q["memory_query_end_to_end_ms"], "p50"), f(&q["memory_query_end_to_end_ms"], "p95"), f(&q["memory_query_end_to_end_ms"], "p99"),
        f(&q["rerank_end_to_end_top5_depth5_ms"], "p50"), f(&q["rerank_end_to_end_top5_depth5_ms"], "p95"), f(&q["rerank_end_to_end_top5_depth5_ms"], "p99"),
        f(&q["rerank_end_to_end_top5_depth10_ms"], "p50"), f(&q["rerank_end_to_end_top5_depth10_ms"], "p95"), f(&q["rerank_end_to_end_top5_depth10_ms"], "p99"),
        f(&q, "p95_ratio"), f(&q, "hybrid_p95_ratio"), query::rounds_md(&q),
        f(&w1, "per_s"), f(&w1, "p50_ms"), f(&w1, "p95_ms"), f(&w4, "per_s"), f(&w4, "p50_ms"), f(&w4, "p95_ms"),
        f(&e1, "per_s"), f(&e1, "p50_ms"), f(&e1, "p95_ms"), f(&e4, "per_s"), f(&e4, "p50_ms"), f(&e4, "p95_ms"),
        f(&raw, "per_s"), f(&raw, "p50_ms"), f(&raw, "p95_ms"),
        f(&bulk, "per_s"), part_rows, f(&raw_bulk, "per_s"),
        load_rate.map_or("already loaded".to_string(), |r| format!("{r:.0} memories/s")),
        fill_s.map_or(String::new(), |s| format!(
            "\nMemories beyond the first {} were inserted by SQL (INSERT ... SELECT with triggers on, HNSW index built afterwards, episode edges added) in {s:.0} s: the query figures need the data, not a million API writes.\n",
            a.api_load
        )),
        flat.as_ref().map_or(String::new(), |p| if let Some(e) = p["error"].as_str() {
            format!("\nThe unpartitioned copy for the partitions comparison could not be made: {e}\n")
        } else { format!(
            "\n| raw pgvector query (300 runs per side, each side warmed on every tenant first) | p50 ms | p95 ms |\n|---|---|---|\n\
             | on memory.items (16 hash partitions) | {:.2} | {:.2} |\n\
             | on an unpartitioned copy of the same rows (same index parameters) | {:.2} | {:.2} |\n\n\
             The copy and its HNSW index took {:.0} s.\n",
            f(&p["partitioned_ms"], "p50"), f(&p["partitioned_ms"], "p95"),
            f(&p["unpartitioned_ms"], "p50"), f(&p["unpartitioned_ms"], "p95"),
            f(p, "copy_and_index_s")
        )}),
    );
    std::fs::create_dir_all(&a.out).unwrap();
    std::fs::write(format!("{}/query-{}.md", a.out, a.items), &md).unwrap();
    std::fs::write(
        format!("{}/query-{}.json", a.out, a.items),
        serde_json::to_string_pretty(&result).unwrap(),
    )
    .unwrap();
    print!("{md}");
}
