//! compact_thread and episode_write through the Rust driver: a thread never loses a message,
//! even with appends racing a compaction; with an LLM endpoint (the stand-in on 127.0.0.1) the
//! summary and the episode come from it; with the endpoint down, the deterministic fallback.

use memory_ext_client_tests::{admin, connect_as, ensure_role, unique};
use memory_ext_standin::StandIn;
use postgres::types::Json;
use serde_json::Value;

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
fn summaries_and_episodes_come_from_the_llm_when_configured() {
    let standin = StandIn::start(0);
    let mut c = admin();
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{}';
         SET memory_ext.llm_url = '{}/v1';
         SET memory_ext.llm_model = 'summariser';",
        unique("llm-sum"),
        standin.base()
    ))
    .unwrap();
    // The stand-in answers with the text after REPLY: in the request.
    c.execute(
        "SELECT message_append('t', 'user', 'We migrate the orders table on Friday.')",
        &[],
    )
    .unwrap();
    c.execute(
        "SELECT message_append('t', 'assistant', $1)",
        &[&format!("Noted. REPLY: I agreed to migrate the orders table on Friday; next I prepare the script. {}", "pad ".repeat(150))],
    )
    .unwrap();
    c.execute("SELECT message_append('t', 'user', 'Thanks.')", &[])
        .unwrap();
    let out: Json<Value> = c
        .query_one("SELECT compact_thread('t', 1)", &[])
        .unwrap()
        .get(0);
    assert_eq!(out.0["method"], "llm");
    let summary = out.0["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("I agreed to migrate the orders table on Friday"),
        "{summary}"
    );
    assert_eq!(summary.split_whitespace().count(), 100, "cut to 100 words");
    assert!(standin.hits("summariser") >= 1);

    // An episode: the LLM's JSON rendered into its template.
    c.execute(
        "SELECT message_append('ep', 'user', $1)",
        &[&r#"Plan the migration. REPLY: {"title": "Orders migration plan", "topic": "database migration", "outcome": "Migration set for Friday.", "tags": ["orders", "migration"], "summary": ["Migrate on Friday", "Script to be prepared"]}"#],
    )
    .unwrap();
    let ep: Json<Value> = c
        .query_one("SELECT episode_write(NULL, 'ep', 'run-9')", &[])
        .unwrap()
        .get(0);
    assert_eq!(ep.0["method"], "llm");
    let content = ep.0["content"].as_str().unwrap();
    assert!(
        content.starts_with("# Episode: Orders migration plan\nDate: "),
        "{content}"
    );
    assert!(content.contains("\nTopic: database migration\nOutcome: Migration set for Friday.\nRefs: thread_id=ep, run_id=run-9\nTags: [\"orders\", \"migration\"]\n\nSummary:\n- Migrate on Friday\n- Script to be prepared\n"), "{content}");
    assert!(ep.0["path"]
        .as_str()
        .unwrap()
        .ends_with("/orders-migration-plan-run-9.md"));

    // memory_capture: the LLM writes the description; status and key lines stay deterministic.
    let output: String = (0..300)
        .map(|i| format!("added package {i}\n"))
        .chain(std::iter::once(
            "npm ERR! ERESOLVE REPLY: npm install log with a peer dependency conflict\n"
                .to_string(),
        ))
        .collect();
    let line: String = c
        .query_one("SELECT memory_capture('npm ci', $1, 100)", &[&output])
        .unwrap()
        .get(0);
    assert!(
        line.starts_with("Command 'npm ci' executed. Output stored in [MemoryRef: cmd_npm_ci - npm install log with a peer dependency conflict"),
        "{line}"
    );
    assert!(line.contains("Status: Failed."), "{line}");

    // The endpoint down: the deterministic fallbacks, and no error.
    c.batch_execute("SET memory_ext.llm_url = 'http://127.0.0.1:9/v1'")
        .unwrap();
    c.execute("SELECT message_append('t', 'user', 'One more thing.')", &[])
        .unwrap();
    c.execute("SELECT message_append('t', 'assistant', 'Sure.')", &[])
        .unwrap();
    let out: Json<Value> = c
        .query_one("SELECT compact_thread('t', 0)", &[])
        .unwrap()
        .get(0);
    assert_eq!(out.0["method"], "extractive");
    let ep: Json<Value> = c
        .query_one("SELECT episode_write(NULL, 't')", &[])
        .unwrap()
        .get(0);
    assert_eq!(ep.0["method"], "extractive");
    let line: String = c
        .query_one("SELECT memory_capture('npm ci', $1, 100)", &[&output])
        .unwrap()
        .get(0);
    assert!(
        line.starts_with("Command 'npm ci' executed. Output stored in [MemoryRef: cmd_npm_ci_2 - output of 'npm ci' (301 lines, Failed)]"),
        "{line}"
    );
}
