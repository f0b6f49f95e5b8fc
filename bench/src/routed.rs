//! Routed calls (docs/citus.md "One round trip"): each of the five `*_for` forms against its
//! original, on the data the query suite loaded (100 tenants `bench-N`), sides taking turns
//! call by call. Run on a Citus coordinator and on one node (scripts/bench.sh suite `citus`),
//! the difference between the two is what the coordinator adds to a call.
//!
//! The original runs as an application calls it: the tenant set by the session, one statement
//! timed. The session's `SET` is made before the timer starts, for both sides alike.

use crate::query::{connect, pct, Gen};
use postgres::types::{Json, Type};
use serde_json::{json, Value};
use std::time::Instant;

/// Timed calls per side and call.
const N: usize = 300;
/// Untimed calls per side first: plan caches, connections to the workers, the model.
const WARM: usize = 30;

/// Each statement is the call alone, `SELECT f(...)`: Citus delegates only a call that is the
/// whole target list (a cast around it, `f(...)::text`, runs on the coordinator).
struct Call {
    name: &'static str,
    original: &'static str,
    routed: &'static str,
}

const CALLS: [Call; 5] = [
    Call {
        name: "memory_query",
        original: "SELECT memory_query($2::jsonb)",
        routed: "SELECT memory_query_for($1, $2::jsonb)",
    },
    Call {
        name: "memory_write",
        original: "SELECT memory_write($2::jsonb)",
        routed: "SELECT memory_write_for($1, $2::jsonb)",
    },
    Call {
        name: "message_append",
        original: "SELECT message_append($2::jsonb ->> 'thread', 'user', $2::jsonb ->> 'text')",
        routed: "SELECT message_append_for($1, $2::jsonb ->> 'thread', 'user', $2::jsonb ->> 'text')",
    },
    Call {
        name: "compile_core_blocks",
        original: "SELECT compile_core_blocks('routed-bench')",
        routed: "SELECT compile_core_blocks_for($1, 'routed-bench')",
    },
    Call {
        name: "memory_context",
        original: "SELECT memory_context('routed-bench', $2::jsonb ->> 'thread', $2::jsonb ->> 'text', 1000)",
        routed: "SELECT memory_context_for($1, 'routed-bench', $2::jsonb ->> 'thread', $2::jsonb ->> 'text', 1000)",
    },
];

/// `{call: {original: {p50_ms, p95_ms}, routed: {...}}}` and its table.
pub fn run(dsn: &str) -> (Value, String) {
    let mut db = connect(dsn);
    // An agent for the block and context calls in each tenant (its default blocks).
    for t in 0..crate::query::TENANTS {
        let user = format!("bench-{t}");
        db.execute(
            "SELECT set_config('memory_ext.user_id', $1, false)",
            &[&user],
        )
        .unwrap();
        db.execute(
            "SELECT memory_agent('routed-bench', $1, 'I help.', 'A bench user.')",
            &[&user],
        )
        .unwrap();
    }
    let mut gen = Gen::new(7);
    // New texts on every run: a text written by an earlier run is an exact duplicate, which
    // memory_write answers as a cheap noop.
    let serial = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as usize
        % 100_000
        * 10_000;
    let mut out = serde_json::Map::new();
    let count: i64 = db
        .query_one("SELECT count(*) FROM memory.items", &[])
        .unwrap()
        .get(0);
    let mut md = format!(
        "# Routed calls\n\n`memory_ext_bench routed` (bench/src/routed.rs) on {count} memories: each \
         call and its `_for` form, {N} timed calls a side after {WARM} untimed, sides taking turns, \
         tenants in rotation over 100, the session's tenant set before the timer starts. \
         `memory_query` with the vector supplied; `memory_write` new texts with vectors; \
         `message_append` and `memory_context` embed their text with the built-in model.\n\n\
         | call | original p50 / p95 ms | `_for` p50 / p95 ms |\n|---|---|---|\n"
    );
    for call in &CALLS {
        let (mut orig, mut routed) = (Vec::new(), Vec::new());
        // Typed: an original leaves the tenant ($1) out.
        let types = [Type::TEXT, Type::JSONB];
        let original = db.prepare_typed(call.original, &types).unwrap();
        let routed_stmt = db.prepare_typed(call.routed, &types).unwrap();
        for i in 0..(WARM + N) {
            for side in 0..2 {
                // Sides take turns; which goes first alternates too.
                let routed_side = (side + i) % 2 == 1;
                let tenant = (i * 2 + side) % crate::query::TENANTS;
                let user = format!("bench-{tenant}");
                let (text, topic) = gen.sentence();
                let arg = match call.name {
                    "memory_query" => json!({"query": text, "top_k": 5, "return": "bullets",
                                             "embedding": gen.vector(topic)}),
                    "memory_write" => {
                        let mut r = gen.request(tenant, serial + i * 2 + side);
                        r.as_object_mut().unwrap().remove("user_id");
                        r
                    }
                    _ => json!({"thread": format!("routed-{tenant}"), "text": text}),
                };
                db.execute(
                    "SELECT set_config('memory_ext.user_id', $1, false)",
                    &[&user],
                )
                .unwrap();
                let t = Instant::now();
                let stmt = if routed_side { &routed_stmt } else { &original };
                db.query_one(stmt, &[&user, &Json(&arg)]).unwrap();
                let ms = t.elapsed().as_secs_f64() * 1e3;
                if i >= WARM {
                    if routed_side {
                        routed.push(ms)
                    } else {
                        orig.push(ms)
                    }
                }
            }
        }
        let side = |v: &mut Vec<f64>| json!({"p50_ms": pct(v, 50.0), "p95_ms": pct(v, 95.0)});
        let (o, r) = (side(&mut orig), side(&mut routed));
        md.push_str(&format!(
            "| `{}` | {:.2} / {:.2} | {:.2} / {:.2} |\n",
            call.name,
            o["p50_ms"].as_f64().unwrap(),
            o["p95_ms"].as_f64().unwrap(),
            r["p50_ms"].as_f64().unwrap(),
            r["p95_ms"].as_f64().unwrap()
        ));
        out.insert(call.name.into(), json!({"original": o, "routed": r}));
    }
    (
        json!({"suite": "routed", "items": count, "calls": out, "n": N}),
        md,
    )
}
