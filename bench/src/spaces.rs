//! `memory_ext_bench spaces`: what reading granted spaces costs memory_query
//! (docs/api.md "Spaces").
//!
//! 100,000 memories in 100 owners of 1,000 each (the query suite's generator): 90 users and 10
//! spaces. One member, an ordinary role (so that row-level security is on, as in production),
//! queries its own memories with 0, 1 and 10 spaces granted, vector supplied, top_k 5: p50 and
//! p95 over `RUNS` queries each, in rounds that alternate the three so that drift hits all alike.

use crate::query::{self, pct, Gen};
use postgres::types::Json;
use postgres::Client;
use serde_json::{json, Value};
use std::time::Instant;

const RUNS: usize = 300;
const ROUNDS: usize = 3;
const SPACES: usize = 10;
const ROLE: &str = "bench_spaces_member";
const MEMBER: &str = "bench-0";

/// Owner `t` of the fill: the last ten are spaces.
fn owner(t: usize) -> String {
    if t >= query::TENANTS - SPACES {
        format!("space:sp{}", t - (query::TENANTS - SPACES))
    } else {
        format!("bench-{t}")
    }
}

pub fn run(dsn: &str, items: usize) -> (Value, String) {
    let mut db = query::connect(dsn);
    let have: i64 = db
        .query_one("SELECT count(*) FROM memory.items", &[])
        .unwrap()
        .get(0);
    if (have as usize) < items {
        eprintln!("filling {} memories by SQL", items - have as usize);
        query::fill_named(dsn, items - have as usize, owner);
        db.batch_execute("VACUUM ANALYZE memory.items").unwrap();
    }
    db.batch_execute(&format!(
        "DO $$ BEGIN CREATE ROLE {ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
         DELETE FROM memory.grants; DELETE FROM memory.spaces;
         CHECKPOINT;"
    ))
    .unwrap();
    // The spaces, administered by another user; the member gets grants as each case needs.
    for k in 0..SPACES {
        db.execute(
            "INSERT INTO memory.spaces (name) VALUES ($1)",
            &[&format!("sp{k}")],
        )
        .unwrap();
    }
    let total: i64 = db
        .query_one("SELECT count(*) FROM memory.items", &[])
        .unwrap()
        .get(0);
    let mut member = Client::connect(&format!("{dsn} user={ROLE}"), postgres::NoTls).unwrap();
    member
        .batch_execute(&format!(
            "SET memory_ext.user_id = '{MEMBER}'; {}",
            query::MQ_PLANNER
        ))
        .unwrap();
    let grant = |db: &mut Client, n: usize| {
        db.batch_execute("DELETE FROM memory.grants").unwrap();
        for k in 0..n {
            db.execute(
                "INSERT INTO memory.grants (space, user_id, access, granted_by) VALUES ($1, $2, 'read', 'bench')",
                &[&format!("sp{k}"), &MEMBER],
            )
            .unwrap();
        }
    };
    let cases = [0usize, 1, SPACES];
    let mut lat: Vec<Vec<f64>> = vec![vec![]; cases.len()];
    let mut results_per_query: Vec<f64> = vec![0.0; cases.len()];
    for round in 0..=ROUNDS {
        for (c, &n) in cases.iter().enumerate() {
            grant(&mut db, n);
            let mut g = Gen::new(7 + round as u64);
            for _ in 0..RUNS {
                let (text, topic) = g.sentence();
                let v = g.vector(topic);
                let req = json!({"query": text, "top_k": 5, "return": "bullets", "embedding": v});
                let t = Instant::now();
                let r: Json<Value> = member
                    .query_one("SELECT memory_query($1)", &[&Json(req)])
                    .unwrap()
                    .get(0);
                // Round 0 warms every case up, untimed.
                if round > 0 {
                    lat[c].push(t.elapsed().as_secs_f64() * 1e3);
                    results_per_query[c] += r.0["items"]
                        .as_array()
                        .map_or(0, |a| a.iter().filter(|i| i.get("space").is_some()).count())
                        as f64;
                }
            }
        }
    }
    let row = |c: usize| {
        let mut v = lat[c].clone();
        json!({"p50": pct(&mut v, 50.0), "p95": pct(&mut v, 95.0),
               "from_spaces_per_query": results_per_query[c] / lat[c].len() as f64})
    };
    let (r0, r1, r10) = (row(0), row(1), row(2));
    let p95 = |r: &Value| r["p95"].as_f64().unwrap_or(f64::NAN);
    let result = json!({
        "suite": "spaces", "items": total, "owners": query::TENANTS, "spaces": SPACES,
        "no_space": r0, "one_space": r1, "ten_spaces": r10,
        "ratio_one": p95(&r1) / p95(&r0), "ratio_ten": p95(&r10) / p95(&r0),
    });
    // On a Citus coordinator (`make bench` suite citus-spaces): each owner is a routed search
    // of its own there (docs/citus.md "Spaces").
    let citus: bool = db
        .query_one(
            "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')",
            &[],
        )
        .unwrap()
        .get(0);
    let (title, how) = if citus {
        (
            " on Citus (a coordinator and two workers)",
            ", through the coordinator; each owner is one routed search there",
        )
    } else {
        ("", "")
    };
    let md = format!(
        "# memory_query across granted spaces at {total} memories{title}\n\n\
         Release build, 2 cores, client on 127.0.0.1{how}. {} owners of ~{} memories each, {SPACES} of them spaces; \
         the member is an ordinary role (row-level security on), vector supplied, top_k 5, bullets; \
         {RUNS} queries x {ROUNDS} rounds per case, the cases alternating, after an untimed round.\n\n\
         | spaces granted | p50 ms | p95 ms | p95 / no space | results from spaces per query |\n|---|---|---|---|---|\n\
         | 0 | {:.2} | {:.2} | 1.00 | {:.1} |\n| 1 | {:.2} | {:.2} | {:.2} | {:.1} |\n| {SPACES} | {:.2} | {:.2} | {:.2} | {:.1} |\n\n\
         Goal (issue 50): p95 with 10 spaces within 1.3x of the single-tenant p95.\n",
        query::TENANTS,
        total / query::TENANTS as i64,
        r0["p50"].as_f64().unwrap_or(0.0), p95(&r0), r0["from_spaces_per_query"].as_f64().unwrap_or(0.0),
        r1["p50"].as_f64().unwrap_or(0.0), p95(&r1), p95(&r1) / p95(&r0), r1["from_spaces_per_query"].as_f64().unwrap_or(0.0),
        r10["p50"].as_f64().unwrap_or(0.0), p95(&r10), p95(&r10) / p95(&r0), r10["from_spaces_per_query"].as_f64().unwrap_or(0.0),
    );
    (result, md)
}
