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
    // With no space granted, the same request also as a superuser (whom row-level security does
    // not bind) and the raw pgvector top 5 as the member and as the superuser: what the
    // policies cost an application's role, on memory_query and on the floor alike.
    db.batch_execute(&format!(
        "SET memory_ext.user_id = '{MEMBER}'; {}",
        query::MQ_PLANNER
    ))
    .unwrap();
    let raw_sql = "SELECT id FROM memory.items WHERE user_id = $1 AND state = 'active' \
                   AND embedding_model = 'builtin:all-MiniLM-L6-v2' \
                   ORDER BY embedding::vector(384) <=> $2::text::vector(384) LIMIT 5";
    // The floor each case stands on: the raw pgvector top 5 over the same owners (the member
    // and the spaces granted to it), as the member. Memories are hash-partitioned by owner
    // (sql/schema.sql), so each owner's partition is one HNSW walk of its own for raw SQL too.
    let raw_owners_sql =
        "SELECT id FROM memory.items WHERE user_id = ANY($1) AND state = 'active' \
                          AND embedding_model = 'builtin:all-MiniLM-L6-v2' \
                          ORDER BY embedding::vector(384) <=> $2::text::vector(384) LIMIT 5";
    let cases = [0usize, 1, SPACES];
    let mut lat: Vec<Vec<f64>> = vec![vec![]; cases.len()];
    let mut raw_lat: Vec<Vec<f64>> = vec![vec![]; cases.len()];
    let mut results_per_query: Vec<f64> = vec![0.0; cases.len()];
    for round in 0..=ROUNDS {
        for (c, &n) in cases.iter().enumerate() {
            grant(&mut db, n);
            let owners: Vec<String> = std::iter::once(MEMBER.to_string())
                .chain((0..n).map(|k| format!("space:sp{k}")))
                .collect();
            let mut g = Gen::new(7 + round as u64);
            for i in 0..RUNS {
                let (text, topic) = g.sentence();
                let v = g.vector(topic);
                let req = json!({"query": text, "top_k": 5, "return": "bullets", "embedding": v});
                let vtext = query::vector_literal(&v);
                // The raw floor and memory_query take turns going first.
                let raw = |member: &mut Client| {
                    let t = Instant::now();
                    drop(member.query(raw_owners_sql, &[&owners, &vtext]).unwrap());
                    t.elapsed().as_secs_f64() * 1e3
                };
                let raw_first = i % 2 == 0;
                let raw_ms_before = raw_first.then(|| raw(&mut member));
                let t = Instant::now();
                let r: Json<Value> = member
                    .query_one("SELECT memory_query($1)", &[&Json(req)])
                    .unwrap()
                    .get(0);
                let member_ms = t.elapsed().as_secs_f64() * 1e3;
                let raw_ms = raw_ms_before.unwrap_or_else(|| raw(&mut member));
                // Round 0 warms every case up, untimed.
                if round > 0 {
                    lat[c].push(member_ms);
                    raw_lat[c].push(raw_ms);
                    results_per_query[c] += r.0["items"]
                        .as_array()
                        .map_or(0, |a| a.iter().filter(|i| i.get("space").is_some()).count())
                        as f64;
                }
            }
        }
    }
    // The four sides with no space granted, each going first in turn (the first to search a
    // vector's part of the graph pays for bringing it into the caches), after 20 untimed.
    grant(&mut db, 0);
    let mut g = Gen::new(99);
    let mut sides: [Vec<f64>; 4] = Default::default();
    for i in 0..RUNS * ROUNDS + 20 {
        let (text, topic) = g.sentence();
        let v = g.vector(topic);
        let req = Json(json!({"query": text, "top_k": 5, "return": "bullets", "embedding": v}));
        let vtext = query::vector_literal(&v);
        for k in 0..4 {
            let side = (k + i) % 4;
            let t = Instant::now();
            match side {
                0 => drop(
                    member
                        .query_one("SELECT memory_query($1)", &[&req])
                        .unwrap(),
                ),
                1 => drop(db.query_one("SELECT memory_query($1)", &[&req]).unwrap()),
                2 => drop(member.query(raw_sql, &[&MEMBER, &vtext]).unwrap()),
                _ => drop(db.query(raw_sql, &[&MEMBER, &vtext]).unwrap()),
            }
            if i >= 20 {
                sides[side].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let [mut member_mq, mut su_mq, mut member_raw, mut su_raw] = sides;
    let row = |c: usize| {
        let mut v = lat[c].clone();
        let mut raw = raw_lat[c].clone();
        json!({"p50": pct(&mut v, 50.0), "p95": pct(&mut v, 95.0),
               "raw_p50": pct(&mut raw, 50.0), "raw_p95": pct(&mut raw, 95.0),
               "from_spaces_per_query": results_per_query[c] / lat[c].len() as f64})
    };
    let (r0, r1, r10) = (row(0), row(1), row(2));
    let pp = |v: &mut Vec<f64>| json!({"p50": pct(v, 50.0), "p95": pct(v, 95.0)});
    let (member_mq, su_mq, member_raw, su_raw) = (
        pp(&mut member_mq),
        pp(&mut su_mq),
        pp(&mut member_raw),
        pp(&mut su_raw),
    );
    let p95 = |r: &Value| r["p95"].as_f64().unwrap_or(f64::NAN);
    let raw_p95 = |r: &Value| r["raw_p95"].as_f64().unwrap_or(f64::NAN);
    let raw_cell = |r: &Value| {
        format!(
            "{:.2} / {:.2}",
            r["raw_p50"].as_f64().unwrap_or(f64::NAN),
            raw_p95(r)
        )
    };
    let result = json!({
        "suite": "spaces", "items": total, "owners": query::TENANTS, "spaces": SPACES,
        "no_space": r0, "one_space": r1, "ten_spaces": r10,
        "ratio_one": p95(&r1) / p95(&r0), "ratio_ten": p95(&r10) / p95(&r0),
        "raw_ratio_one": raw_p95(&r1) / raw_p95(&r0), "raw_ratio_ten": raw_p95(&r10) / raw_p95(&r0),
        "no_space_member_sides": member_mq, "no_space_as_superuser": su_mq, "raw_pgvector_member": member_raw,
        "raw_pgvector_superuser": su_raw,
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
         | spaces granted | p50 ms | p95 ms | p95 / no space | results from spaces per query | raw pgvector over the same owners, p50 / p95 ms | its p95 / no space |\n|---|---|---|---|---|---|---|\n\
         | 0 | {:.2} | {:.2} | 1.00 | {:.1} | {} | 1.00 |\n| 1 | {:.2} | {:.2} | {:.2} | {:.1} | {} | {:.2} |\n| {SPACES} | {:.2} | {:.2} | {:.2} | {:.1} | {} | {:.2} |\n\n\
         Goal (issue 50): p95 with 10 spaces within 1.3x of the single-tenant p95. The raw column is the floor: the raw \
         pgvector top 5 over the member and the spaces granted to it (`user_id = ANY(owners)`), as the member, taking turns \
         with memory_query; memories are hash-partitioned by owner, so raw SQL walks one HNSW index per owner's partition too.\n\n\
         With no space granted, {} more requests four ways, each going first in turn: memory_query as the member and as a superuser \
         (row-level security does not bind it), and the raw pgvector top 5 (`ORDER BY embedding <=> q LIMIT 5` on the owner's active rows, \
         memory_query's planner settings) as each:\n\n\
         | | p50 ms | p95 ms |\n|---|---|---|\n\
         | memory_query, the member (row-level security) | {:.2} | {:.2} |\n\
         | memory_query, a superuser | {:.2} | {:.2} |\n\
         | raw pgvector, the member | {:.2} | {:.2} |\n\
         | raw pgvector, a superuser | {:.2} | {:.2} |\n",
        query::TENANTS,
        total / query::TENANTS as i64,
        r0["p50"].as_f64().unwrap_or(0.0), p95(&r0), r0["from_spaces_per_query"].as_f64().unwrap_or(0.0), raw_cell(&r0),
        r1["p50"].as_f64().unwrap_or(0.0), p95(&r1), p95(&r1) / p95(&r0), r1["from_spaces_per_query"].as_f64().unwrap_or(0.0),
        raw_cell(&r1), raw_p95(&r1) / raw_p95(&r0),
        r10["p50"].as_f64().unwrap_or(0.0), p95(&r10), p95(&r10) / p95(&r0), r10["from_spaces_per_query"].as_f64().unwrap_or(0.0),
        raw_cell(&r10), raw_p95(&r10) / raw_p95(&r0),
        RUNS * ROUNDS,
        member_mq["p50"].as_f64().unwrap_or(0.0), p95(&member_mq),
        su_mq["p50"].as_f64().unwrap_or(0.0), p95(&su_mq),
        member_raw["p50"].as_f64().unwrap_or(0.0), p95(&member_raw),
        su_raw["p50"].as_f64().unwrap_or(0.0), p95(&su_raw),
    );
    (result, md)
}
