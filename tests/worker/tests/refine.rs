//! The worker's refine job (docs/api.md "Refining") against the stand-in (tests/standin) with
//! exact outcomes: what compact_thread, episode_write and memory_capture wrote without the
//! model is replaced by the model's version, once each. The same against a real model, where
//! only what holds for any model is asserted, is in tests/worker/tests/model.rs.

use memory_ext_standin::StandIn;
use memory_ext_worker_tests::{admin, poll, set_system, unique};
use postgres::types::Json;
use postgres::Client;
use serde_json::Value;

const BASE_JOBS: &str = "ttl_sweep,purge,backfill";

fn append(c: &mut Client, user: &str, thread: &str, role: &str, text: &str) {
    c.execute(
        "SELECT set_config('memory_ext.user_id', $1, false), message_append($2, $3, $4)",
        &[&user, &thread, &role, &text],
    )
    .unwrap();
}

#[test]
fn the_refine_job_puts_the_models_summary_episode_and_description_in_place_once() {
    let standin = StandIn::start(0);
    let mut c = admin();
    let user = unique("refine");
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{user}'; SET memory_ext.llm_url = '{}/v1'; SET memory_ext.llm_model = 'summariser'",
        standin.base()
    ))
    .unwrap();
    // The stand-in answers with the text after REPLY: in what it is sent.
    append(
        &mut c,
        &user,
        "sum",
        "user",
        "We migrate the orders table on Friday.",
    );
    append(
        &mut c,
        &user,
        "sum",
        "assistant",
        &format!(
            "Noted. REPLY: I agreed to migrate the orders table on Friday; next I prepare the script. {}",
            "pad ".repeat(150)
        ),
    );
    append(&mut c, &user, "sum", "user", "Thanks.");
    let compacted: Json<Value> = c
        .query_one("SELECT compact_thread('sum', 1)", &[])
        .unwrap()
        .get(0);
    assert_eq!(compacted.0["pending"], true);
    append(
        &mut c,
        &user,
        "ep",
        "user",
        r#"Plan the migration. REPLY: {"title": "Orders migration plan", "topic": "database migration", "outcome": "Migration set for Friday.", "tags": ["orders", "migration"], "summary": ["Migrate on Friday", "Script to be prepared"]}"#,
    );
    let ep: Json<Value> = c
        .query_one("SELECT episode_write(NULL, 'ep', 'run-9')", &[])
        .unwrap()
        .get(0);
    assert_eq!(ep.0["pending"], true);
    let path = ep.0["path"].as_str().unwrap().to_string();
    let output: String = (0..300)
        .map(|i| format!("added package {i}\n"))
        .chain(std::iter::once(
            "npm ERR! ERESOLVE REPLY: npm install log with a peer dependency conflict\n"
                .to_string(),
        ))
        .collect();
    c.execute("SELECT memory_capture('npm ci', $1, 100)", &[&output])
        .unwrap();
    c.batch_execute("RESET memory_ext.llm_url; RESET memory_ext.llm_model")
        .unwrap();

    let url = format!("{}/v1", standin.base());
    let jobs = format!("{BASE_JOBS},refine");
    set_system(
        &mut c,
        &[
            ("memory_ext.llm_url", Some(&url)),
            ("memory_ext.llm_model", Some("summariser")),
            ("memory_ext.worker_jobs", Some(&jobs)),
        ],
    );
    let done = poll(60, || {
        let n: i64 = c
            .query_one(
                "SELECT (SELECT count(*) FROM memory.messages WHERE user_id = $1 AND metadata -> 'summary' ->> 'pending' = 'llm') \
                      + (SELECT count(*) FROM memory.files WHERE user_id = $1 AND metadata ->> 'pending' = 'llm') \
                      + (SELECT count(*) FROM memory.details WHERE user_id = $1 AND metadata ->> 'pending' = 'llm')",
                &[&user],
            )
            .unwrap()
            .get(0);
        (n == 0).then_some(())
    });
    set_system(
        &mut c,
        &[
            ("memory_ext.llm_url", None),
            ("memory_ext.llm_model", None),
            ("memory_ext.worker_jobs", Some(BASE_JOBS)),
        ],
    );
    assert!(done.is_some(), "still pending after 60 s");

    let (content, method): (String, Option<String>) = c
        .query_one(
            "SELECT content, metadata -> 'summary' ->> 'method' FROM memory.messages WHERE user_id = $1 AND thread_id = 'sum' AND is_summary",
            &[&user],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(method.as_deref(), Some("llm"));
    assert!(
        content.contains("I agreed to migrate the orders table on Friday"),
        "{content}"
    );
    let (file, fmethod): (String, Option<String>) = c
        .query_one(
            "SELECT content, metadata ->> 'method' FROM memory.files WHERE user_id = $1 AND path = $2",
            &[&user, &path],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(fmethod.as_deref(), Some("llm"));
    assert!(
        file.starts_with("# Episode: Orders migration plan\n"),
        "{file}"
    );
    let memory: String = c
        .query_one(
            "SELECT text FROM memory.items WHERE user_id = $1 AND id::text = $2",
            &[&user, &ep.0["memory_id"].as_str().unwrap()],
        )
        .unwrap()
        .get(0);
    assert!(memory.contains("Orders migration plan"), "{memory}");
    let (description, line): (String, String) = c
        .query_one(
            "SELECT d.description, i.text FROM memory.details d JOIN memory.items i ON i.user_id = d.user_id AND i.id = d.item_id WHERE d.user_id = $1 AND d.key = 'cmd_npm_ci'",
            &[&user],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(
        description,
        "npm install log with a peer dependency conflict"
    );
    assert_eq!(
        line,
        "[MemoryRef: cmd_npm_ci - npm install log with a peer dependency conflict]"
    );
    // Once each: three successful refines, and the model asked three times.
    let ok: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.events WHERE user_id = $1 AND op = 'refine' AND status = 'ok'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(ok, 3);
    assert_eq!(standin.hits("summariser"), 3);
}
