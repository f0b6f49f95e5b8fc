//! `memory_ext_bench precision`: the query suite's memories with the built-in model's HNSW
//! indexes over `vector` (full precision) and then over `halfvec` (half), moved between the two
//! as an operator would (memory_embedding_reindex's statements, one at a time, while the server
//! runs), back to full at the end. For each: the indexes' size, the table's (the same: the stored
//! vectors keep full precision), the raw pgvector top 5 and memory_query (vector supplied) p50 /
//! p95 taking turns, and the index walk's recall@5 against the exact top 5 of full-precision
//! distances; then full precision again after moving back, so that what a rebuilt index changes
//! by itself shows beside what the precision changes. Needs the query suite's data
//! (`scripts/bench.sh query precision`).

use crate::query::{connect, pct, vector_literal, Gen, MQ_PLANNER, TENANTS};
use postgres::types::Json;
use postgres::Client;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Instant;

const MODEL: &str = "builtin:all-MiniLM-L6-v2";

pub fn run(dsn: &str, n: usize) -> (Value, String) {
    let mut db = connect(dsn);
    let items: i64 = db
        .query_one(
            "SELECT count(*) FROM memory.items WHERE embedding_model = $1",
            &[&MODEL],
        )
        .unwrap()
        .get(0);
    assert!(items > 0, "no memories: run the query suite first");
    // Start from full precision whatever an interrupted run left.
    let start = reindex(&mut db, "full");
    let full = measure(&mut db, "vector", n);
    let to_half = reindex(&mut db, "half");
    let half = measure(&mut db, "halfvec", n);
    let to_full = reindex(&mut db, "full");
    // Full precision again, so that an order effect (caches warmed by the earlier rounds) shows.
    let full_again = measure(&mut db, "vector", n);
    let ratio = |k: &str| half[k].as_f64().unwrap() / full[k].as_f64().unwrap();
    let result = json!({
        "memories": items,
        "queries": n,
        "full": full,
        "half": half,
        "full_again": full_again,
        "reindex_to_half_s": to_half,
        "reindex_to_full_s": to_full,
        "reindex_at_start_s": start,
        "index_size_ratio": ratio("index_bytes"),
    });
    let mb = |v: &Value| v.as_f64().unwrap() / 1048576.0;
    let row = |name: &str, r: &Value| {
        format!(
            "| {name} | {:.0} MB | {:.0} MB | {:.2} / {:.2} | {:.2} / {:.2} | {:.3} | {} |\n",
            mb(&r["index_bytes"]),
            mb(&r["table_bytes"]),
            r["raw_ms"]["p50"].as_f64().unwrap(),
            r["raw_ms"]["p95"].as_f64().unwrap(),
            r["memory_query_ms"]["p50"].as_f64().unwrap(),
            r["memory_query_ms"]["p95"].as_f64().unwrap(),
            r["recall_at_5"].as_f64().unwrap(),
            r["plans"],
        )
    };
    let md = format!(
        "# Half precision ({} memories, 100 tenants; {} queries)\n\n\
         The built-in model's HNSW indexes over `vector` and over `halfvec` on the same memories \
         (bench/src/precision.rs). Recall@5: the raw index walk's top 5 against the exact top 5 \
         by full-precision distance. memory_query: vector supplied, top_k 5, bullets.\n\n\
         | indexes | index size (items) | table size (items) | raw pgvector p50 / p95 ms | memory_query p50 / p95 ms | recall@5 | raw plans |\n\
         |---|---|---|---|---|---|---|\n{}{}{}\n\
         Index size half / full: {:.3}. Moving online (memory_embedding_reindex's statements, \
         CREATE INDEX CONCURRENTLY per partition): to half {:.1} s, back to full {:.1} s.\n\n\
         memory_query's top 5 under half precision, the same memories as under full: {:.3} of \
         the places (overlap@5); full again against full (the same precision, the index rebuilt): \
         {:.3}.\n",
        items,
        n,
        row("full (vector)", &full),
        row("half (halfvec)", &half),
        row("full again, after moving back", &full_again),
        ratio("index_bytes"),
        to_half,
        to_full,
        overlap(&full["memory_query_top5"], &half["memory_query_top5"]),
        overlap(&full["memory_query_top5"], &full_again["memory_query_top5"]),
    );
    (result, md)
}

/// Runs the statements that move the model's indexes to `precision`; seconds taken.
fn reindex(db: &mut Client, precision: &str) -> f64 {
    let t = Instant::now();
    let statements: Vec<String> = db
        .query(
            "SELECT statement FROM memory_embedding_reindex($1) ORDER BY step",
            &[&precision],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for s in &statements {
        db.batch_execute(s).unwrap();
    }
    t.elapsed().as_secs_f64()
}

/// Share of the places of `b`'s top 5 lists that `a`'s lists hold too.
fn overlap(a: &Value, b: &Value) -> f64 {
    let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
    let (mut hit, mut all) = (0usize, 0usize);
    for (x, y) in a.iter().zip(b) {
        let x: HashSet<&str> = x
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for id in y.as_array().unwrap() {
            all += 1;
            hit += x.contains(id.as_str().unwrap()) as usize;
        }
    }
    hit as f64 / all.max(1) as f64
}

fn measure(db: &mut Client, ty: &str, n: usize) -> Value {
    let index_bytes: i64 = db
        .query_one(
            "SELECT coalesce(sum(pg_relation_size(i.inhrelid)), 0)::int8 FROM pg_inherits i
             WHERE i.inhparent = ('memory.' || memory._model_index_name('items', $1, 384, $2))::regclass",
            &[&MODEL, &ty],
        )
        .unwrap()
        .get(0);
    let table_bytes: i64 = db
        .query_one(
            "SELECT sum(pg_table_size(inhrelid))::int8 FROM pg_inherits WHERE inhparent = 'memory.items'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    let raw_sql = format!(
        "SELECT id::text FROM memory.items WHERE user_id = $1 AND state = 'active' AND embedding_model = '{MODEL}'
           AND importance >= 2
         ORDER BY embedding::{ty}(384) <=> $2::text::{ty}(384) LIMIT 5"
    );
    // Exact: the unsized column matches no index, so every row of the tenant is compared.
    let exact_sql = format!(
        "SELECT id::text FROM memory.items WHERE user_id = $1 AND state = 'active' AND embedding_model = '{MODEL}'
           AND importance >= 2
         ORDER BY embedding <=> $2::text::vector LIMIT 5"
    );
    db.batch_execute(MQ_PLANNER).unwrap();
    let mut g = Gen::new(11);
    let (mut raw, mut mq, mut top5) = (vec![], vec![], vec![]);
    let (mut hit, mut all) = (0usize, 0usize);
    let mut plans = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..n + n / 4 {
        let user = format!("bench-{}", g.rng.below(TENANTS));
        let (text, topic) = g.sentence();
        let v = g.vector(topic);
        let vtext = vector_literal(&v);
        db.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
            .unwrap();
        let req = json!({"query": text, "top_k": 5, "return": "bullets", "filters": {"importance_min": 2}, "embedding": v});
        let (mut raw_ms, mut mq_ms) = (0.0, 0.0);
        let mut ids = vec![];
        let mut found = vec![];
        // The two take turns going first (bench/src/query.rs says why).
        for side in 0..2 {
            if (side + i) % 2 == 0 {
                let t = Instant::now();
                let rows = db.query(&raw_sql, &[&user, &vtext]).unwrap();
                raw_ms = t.elapsed().as_secs_f64() * 1e3;
                found = rows.iter().map(|r| r.get::<_, String>(0)).collect();
            } else {
                let t = Instant::now();
                let r: Json<Value> = db
                    .query_one("SELECT memory_query($1)", &[&Json(req.clone())])
                    .unwrap()
                    .get(0);
                mq_ms = t.elapsed().as_secs_f64() * 1e3;
                ids = r.0["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|it| it["id"].clone())
                    .collect();
            }
        }
        // The first quarter warms the caches, untimed.
        if i < n / 4 {
            continue;
        }
        raw.push(raw_ms);
        mq.push(mq_ms);
        top5.push(Value::from(ids));
        let exact: HashSet<String> = db
            .query(&exact_sql, &[&user, &vtext])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        all += exact.len();
        hit += found.iter().filter(|id| exact.contains(*id)).count();
        let plan: Vec<String> = db
            .query(&format!("EXPLAIN (COSTS OFF) {raw_sql}"), &[&user, &vtext])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let shape = if plan.iter().any(|l| l.contains("Sort")) {
            "sort"
        } else {
            "index walk"
        };
        *plans.entry(shape.into()).or_default() += 1;
    }
    let s =
        |v: &mut Vec<f64>| json!({"p50": pct(v, 50.0), "p95": pct(v, 95.0), "p99": pct(v, 99.0)});
    json!({
        "index_bytes": index_bytes,
        "table_bytes": table_bytes,
        "raw_ms": s(&mut raw),
        "memory_query_ms": s(&mut mq),
        "recall_at_5": hit as f64 / all.max(1) as f64,
        "plans": plans.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", "),
        "memory_query_top5": top5,
    })
}
