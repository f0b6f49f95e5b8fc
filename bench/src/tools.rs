//! `memory_ext_bench tools`: what memory_tool_call adds over the SQL function a tool stands
//! for (the goal: at most 1 ms at p50). Each pair runs the same work both ways, in
//! alternation, on one connection: a core-block append (memory_append vs block_append), a
//! long-term memory search (archival_search vs memory_query asking for the 50 it pages over, as
//! bullets) and a conversation search (conversation_search vs the SQL function). Supplied-vector-free:
//! the built-in model embeds the searches both ways.

use crate::query::pct;
use postgres::types::Json;
use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::time::Instant;

const RUNS: usize = 200;

fn timed(db: &mut Client, sql: &str, args: &[&(dyn postgres::types::ToSql + Sync)]) -> f64 {
    let t = Instant::now();
    db.query(sql, args).unwrap();
    t.elapsed().as_secs_f64() * 1e3
}

pub fn run(dsn: &str) -> (Value, String) {
    let mut db = Client::connect(dsn, NoTls).unwrap();
    db.batch_execute(
        "SET memory_ext.user_id = 'bench-tools';
         SELECT memory_agent('bench-tools-agent', 'bench-tools', 'I help.', 'Name: Bea');",
    )
    .unwrap();
    for i in 0..200 {
        db.query_one(
            "SELECT memory_write($1)",
            &[&Json(json!({"text": format!("Bea noted fact number {i} about her garden and the tomatoes."),
                           "kind": "archival", "agent_id": "bench-tools-agent"}))],
        )
        .unwrap();
        db.query_one(
            "SELECT message_append('bench-tools-thread', 'user', $1, 'bench-tools')",
            &[&format!("Message {i}: the tomatoes need water on Tuesday.")],
        )
        .unwrap();
    }
    let pairs: [(&str, &str, &str); 3] = [
        (
            "core block append",
            "SELECT memory_tool_call('bench-tools-agent', 'bench-tools-thread', 'memory_append', '{\"block\": \"persona\", \"content\": \"x\"}')",
            "SELECT block_append('bench-tools-agent', 'persona', 'x')",
        ),
        (
            "long-term memory search",
            "SELECT memory_tool_call('bench-tools-agent', 'bench-tools-thread', 'archival_search', '{\"query\": \"when do the tomatoes need water\"}')",
            "SELECT memory_query('{\"query\": \"when do the tomatoes need water\", \"top_k\": 50, \"return\": \"bullets\"}')",
        ),
        (
            "conversation search",
            "SELECT memory_tool_call('bench-tools-agent', 'bench-tools-thread', 'conversation_search', '{\"query\": \"tomatoes water\"}')",
            "SELECT * FROM conversation_search('bench-tools-thread', 'tomatoes water', \"limit\" => 50)",
        ),
    ];
    let mut rows = String::new();
    let mut out = vec![];
    for (label, tool, direct) in pairs {
        // Keep the block from growing past its limit: reset it before each pair.
        let (mut t, mut d) = (vec![], vec![]);
        for i in 0..RUNS + 10 {
            if label == "core block append" {
                db.batch_execute("SELECT block_set('bench-tools-agent', 'persona', 'I help.')")
                    .unwrap();
            }
            let a = timed(&mut db, tool, &[]);
            if label == "core block append" {
                db.batch_execute("SELECT block_set('bench-tools-agent', 'persona', 'I help.')")
                    .unwrap();
            }
            let b = timed(&mut db, direct, &[]);
            if i >= 10 {
                t.push(a);
                d.push(b);
            }
        }
        let (t50, t95, d50, d95) = (
            pct(&mut t, 50.0),
            pct(&mut t, 95.0),
            pct(&mut d, 50.0),
            pct(&mut d, 95.0),
        );
        rows += &format!(
            "| {label} | {t50:.2} | {t95:.2} | {d50:.2} | {d95:.2} | {:.2} |\n",
            t50 - d50
        );
        out.push(
            json!({"call": label, "runs": RUNS, "tool_ms": {"p50": t50, "p95": t95},
                        "direct_ms": {"p50": d50, "p95": d95}, "overhead_p50_ms": t50 - d50}),
        );
    }
    let md = format!(
        "# Agent tools: memory_tool_call against the function it stands for\n\n\
         Release build, 2 cores, Rust `postgres` driver on 127.0.0.1, {RUNS} runs of each, in \
         alternation, after 10 warm-up runs; one tenant with 200 archival memories and 200 messages. \
         The tool call adds the agent's rules (blocks, allowlists), a subtransaction, the event row \
         and the text for the model (goal: at most 1 ms at p50).\n\n\
         | call | memory_tool_call p50 ms | p95 ms | SQL function p50 ms | p95 ms | overhead p50 ms |\n\
         |---|---|---|---|---|---|\n{rows}"
    );
    (json!({"suite": "tools", "results": out}), md)
}
