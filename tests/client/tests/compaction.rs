//! compact_thread and episode_write through the Rust driver: a thread never loses a message,
//! even with appends racing a compaction; with an LLM endpoint (the stand-in on 127.0.0.1) the
//! summary and the episode come from it; with the endpoint down, the deterministic fallback.

use memory_ext_client_tests::{admin, connect_as, ensure_role, unique};
use memory_ext_standin::StandIn;
use postgres::types::Json;
use serde_json::{json, Value};

fn role() -> &'static str {
    let mut a = admin();
    ensure_role(&mut a, "memory_compact_role");
    "memory_compact_role"
}

fn counts(c: &mut postgres::Client, thread: &str) -> (i64, i64, i64) {
    let r = c
        .query_one(
            "SELECT count(*) FILTER (WHERE NOT is_summary), count(*) FILTER (WHERE is_summary),
                    count(*) FILTER (WHERE in_context AND is_summary)
             FROM memory.messages WHERE thread_id = $1",
            &[&thread],
        )
        .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

#[test]
fn compaction_racing_appends_never_loses_a_message() {
    let r = role();
    let user = unique("compact");
    let thread = "long";
    let mut c = connect_as(r);
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    for i in 0..60 {
        c.execute(
            "SELECT message_append($1, $2, $3)",
            &[
                &thread,
                &if i % 2 == 0 { "user" } else { "assistant" },
                &format!("Message {i} about the deployment of service {}.", i % 7),
            ],
        )
        .unwrap();
    }
    let writer = {
        let user = user.clone();
        std::thread::spawn(move || {
            let mut w = connect_as(r);
            w.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
                .unwrap();
            for i in 0..80 {
                w.execute(
                    "SELECT message_append('long', 'user', $1)",
                    &[&format!("Late message {i}.")],
                )
                .unwrap();
            }
        })
    };
    let mut compactions = 0;
    let mut compact = |c: &mut postgres::Client| {
        let out: Json<Value> = c
            .query_one("SELECT compact_thread('long', 5)", &[])
            .unwrap()
            .get(0);
        if out.0["summarized"].as_i64().unwrap() > 0 {
            compactions += 1;
            let words = out.0["summary"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .count();
            assert!(words <= 100, "{words} words");
        }
    };
    // Compactions while the writer appends, then one after it is done.
    compact(&mut c);
    while !writer.is_finished() {
        compact(&mut c);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    compact(&mut c);
    writer.join().unwrap();
    assert!(compactions >= 2, "{compactions}");
    let (messages, summaries, live) = counts(&mut c, thread);
    assert_eq!(messages, 140, "every appended message is still there");
    assert_eq!(summaries, compactions);
    assert_eq!(
        live, 1,
        "one summary in context, the older ones folded into it"
    );
    // Seqs are gapless and unique: nothing overwritten, nothing lost.
    let gaps: i64 = c
        .query_one(
            "SELECT count(*) FROM generate_series(1, (SELECT max(seq) FROM memory.messages WHERE thread_id = 'long')) s
             WHERE NOT EXISTS (SELECT 1 FROM memory.messages WHERE thread_id = 'long' AND seq = s)",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(gaps, 0);
    let out: Json<Value> = c
        .query_one("SELECT compact_thread('long', 5)", &[])
        .unwrap()
        .get(0);
    let fits: bool = c
        .query_one("SELECT NOT needs_compaction('long', 2000)", &[])
        .unwrap()
        .get(0);
    assert!(fits, "{}", out.0);
}

#[test]
fn with_an_llm_configured_compaction_episodes_and_captures_answer_at_once_and_wait_for_the_worker()
{
    let standin = StandIn::start(0);
    let mut c = admin();
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{}';
         SET memory_ext.llm_url = '{}/v1';
         SET memory_ext.llm_model = 'slow-5000';",
        unique("llm-sum"),
        standin.base()
    ))
    .unwrap();
    c.execute(
        "SELECT message_append('t', 'user', 'We migrate the orders table on Friday.')",
        &[],
    )
    .unwrap();
    c.execute(
        "SELECT message_append('t', 'assistant', 'Noted: the orders table moves on Friday; next I prepare the script.')",
        &[],
    )
    .unwrap();
    c.execute("SELECT message_append('t', 'user', 'Thanks.')", &[])
        .unwrap();
    // The model would take 5 s: none of these asks it (docs/api.md "Refining").
    let out: Json<Value> = c
        .query_one("SELECT compact_thread('t', 1)", &[])
        .unwrap()
        .get(0);
    assert_eq!(out.0["method"], "extractive");
    assert_eq!(out.0["pending"], true);
    let marked: Option<String> = c
        .query_one(
            "SELECT metadata -> 'summary' ->> 'pending' FROM memory.messages WHERE thread_id = 't' AND is_summary",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(marked.as_deref(), Some("llm"));
    let ep: Json<Value> = c
        .query_one("SELECT episode_write(NULL, 't', 'run-9')", &[])
        .unwrap()
        .get(0);
    assert_eq!(ep.0["method"], "extractive");
    assert_eq!(ep.0["pending"], true);
    let output: String = (0..300).map(|i| format!("added package {i}\n")).collect();
    let line: String = c
        .query_one("SELECT memory_capture('npm ci', $1, 100)", &[&output])
        .unwrap()
        .get(0);
    assert!(
        line.starts_with("Command 'npm ci' executed. Output stored in [MemoryRef: cmd_npm_ci - output of 'npm ci' (300 lines, Success)]"),
        "{line}"
    );
    assert_eq!(
        standin.hits("slow-5000"),
        0,
        "an application call asked the model"
    );

    // Without an LLM nothing is pending.
    c.batch_execute("RESET memory_ext.llm_url").unwrap();
    c.execute("SELECT message_append('t', 'user', 'One more thing.')", &[])
        .unwrap();
    c.execute("SELECT message_append('t', 'assistant', 'Sure.')", &[])
        .unwrap();
    let out: Json<Value> = c
        .query_one("SELECT compact_thread('t', 0)", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        (&out.0["method"], &out.0["pending"]),
        (&json!("extractive"), &json!(false))
    );
    let ep: Json<Value> = c
        .query_one("SELECT episode_write(NULL, 't')", &[])
        .unwrap()
        .get(0);
    assert_eq!(ep.0["pending"], false);
}
