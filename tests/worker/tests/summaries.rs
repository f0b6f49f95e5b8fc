//! The worker's summaries job (docs/api.md "Summaries") against the stand-in (tests/standin),
//! with exact outcomes: a summary gets a version from the model once, none while nothing in
//! its scope changes, the next once a memory it rests on is superseded, and none past the
//! tenant's token budget. The same against a real model is in tests/worker/tests/model.rs.

use memory_ext_standin::StandIn;
use memory_ext_worker_tests::{admin, poll, set_system, unique};
use postgres::types::Json;
use postgres::Client;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const BASE_JOBS: &str = "ttl_sweep,purge,backfill";

fn write(c: &mut Client, text: &str, category: &str, day: &str) -> String {
    let r: Json<Value> = c
        .query_one(
            "SELECT memory_write($1)",
            &[&Json(
                json!({"text": text, "category": category, "happened_at": day}),
            )],
        )
        .unwrap()
        .get(0);
    r.0["id"].as_str().unwrap().to_string()
}

fn summary(c: &mut Client, name: &str) -> Value {
    let r: Json<Value> = c
        .query_one("SELECT memory_summary_get($1)", &[&name])
        .unwrap()
        .get(0);
    r.0
}

fn version(c: &mut Client, name: &str) -> i64 {
    summary(c, name)["version"].as_i64().unwrap()
}

#[test]
fn a_summary_gets_a_version_once_per_change_of_what_it_rests_on() {
    let standin = StandIn::start(0);
    let mut c = admin();
    let user = unique("summaries");
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    let veg = write(&mut c, "Ana is vegetarian.", "food", "2026-01-01");
    let thai = write(&mut c, "Ana loves Thai curries.", "food", "2026-01-02");
    // The stand-in answers with what follows REPLY: in the prompt; the prompt lists the
    // memories oldest first, so this one (happening last) ends it.
    let reply = write(
        &mut c,
        r#"REPLY: {"answer": "Ana eats no meat and loves Thai curries.", "used": [1, 2, 7]}"#,
        "food",
        "2030-01-01",
    );
    let d: Json<Value> = c
        .query_one(
            "SELECT memory_summary_define('food', 'What does the user prefer in food?', '{\"categories\": [\"food\"]}')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(d.0["created"], true);
    assert_eq!(summary(&mut c, "food")["stale"], true);

    let url = format!("{}/v1", standin.base());
    let jobs = format!("{BASE_JOBS},summaries");
    set_system(
        &mut c,
        &[
            ("memory_ext.llm_url", Some(&url)),
            ("memory_ext.llm_model", Some("summariser")),
            ("memory_ext.summary_builtin", Some("off")),
            ("memory_ext.worker_jobs", Some(&jobs)),
        ],
    );
    let first = poll(60, || (version(&mut c, "food") == 1).then_some(()));
    assert!(
        first.is_some(),
        "no version after 60 s: {}",
        summary(&mut c, "food")
    );
    let s = summary(&mut c, "food");
    assert_eq!(s["answer"], "Ana eats no meat and loves Thai curries.");
    assert_eq!(s["method"], "llm");
    assert_eq!(s["stale"], false);
    // The memories the model named that exist (7 does not): the first two, oldest first.
    let evidence: BTreeSet<&str> = s["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(evidence, BTreeSet::from([veg.as_str(), thai.as_str()]));
    assert_eq!(standin.hits("summariser"), 1);

    // Nothing in its scope changes: a memory of another category, several worker ticks.
    write(
        &mut c,
        "Ana works nights at the hospital.",
        "work",
        "2026-01-03",
    );
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(version(&mut c, "food"), 1);
    assert_eq!(standin.hits("summariser"), 1);

    // A memory it rests on is superseded: stale at once, and one new version.
    c.query_one(
        "SELECT memory_write($1)",
        &[&Json(
            json!({"text": "Ana eats fish again.", "category": "food",
                        "happened_at": "2026-01-04", "supersedes": veg}),
        )],
    )
    .unwrap();
    assert_eq!(summary(&mut c, "food")["stale"], true);
    let second = poll(60, || (version(&mut c, "food") == 2).then_some(()));
    assert!(
        second.is_some(),
        "no second version: {}",
        summary(&mut c, "food")
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(version(&mut c, "food"), 2);
    assert_eq!(standin.hits("summariser"), 2);
    let s = summary(&mut c, "food");
    let evidence: Vec<&str> = s["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!evidence.contains(&veg.as_str()), "{s}");
    assert!(evidence.contains(&thai.as_str()), "{s}");
    // History keeps the first version as it was.
    let v1: Json<Value> = c
        .query_one("SELECT memory_summary_get('food', 1)", &[])
        .unwrap()
        .get(0);
    assert!(v1.0["evidence"].as_array().unwrap().contains(&json!(veg)));
    let (calls, tokens): (i32, i64) = c
        .query_one(
            "SELECT calls, tokens_in + tokens_out FROM memory.summary_usage WHERE user_id = $1",
            &[&user],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(calls, 2);
    assert!(tokens > 0);

    // Past the tenant's token budget: stale, marked, and no call until tomorrow.
    set_system(&mut c, &[("memory_ext.summary_daily_tokens", Some("1"))]);
    c.query_one(
        "SELECT memory_write($1)",
        &[&Json(json!({"text": "Ana is allergic to peanuts.", "category": "food", "happened_at": "2026-01-05"}))],
    )
    .unwrap();
    let waiting = poll(30, || {
        let s = summary(&mut c, "food");
        s["error"]
            .as_str()
            .is_some_and(|e| e.contains("tokens for today"))
            .then_some(s)
    });
    set_system(
        &mut c,
        &[
            ("memory_ext.llm_url", None),
            ("memory_ext.llm_model", None),
            ("memory_ext.summary_builtin", None),
            ("memory_ext.summary_daily_tokens", None),
            ("memory_ext.worker_jobs", Some(BASE_JOBS)),
        ],
    );
    let waiting = waiting.expect("the budget did not stop the refresh");
    assert_eq!(waiting["stale"], true);
    assert_eq!(waiting["version"], 2);
    assert_eq!(standin.hits("summariser"), 2);
    let _ = reply;
    // Events: two written, one skipped for the budget.
    let (ok, skipped): (i64, i64) = c
        .query_one(
            "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'skipped') \
             FROM memory.events WHERE user_id = $1 AND op = 'summary'",
            &[&user],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(ok, 2);
    assert!(skipped >= 1);
}

#[test]
fn parallel_refreshes_of_one_summary_write_one_version() {
    let mut c = admin();
    let user = unique("summaries-par");
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    write(
        &mut c,
        "Ana drinks green tea every morning.",
        "drinks",
        "2026-02-01",
    );
    c.execute(
        "SELECT memory_summary_define('drinks', 'What does the user drink?', '{\"categories\": [\"drinks\"]}')",
        &[],
    )
    .unwrap();
    // Eight sessions refresh every stale summary at once (no model: the answer from the memories).
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let user = user.clone();
            std::thread::spawn(move || {
                let mut c = admin();
                c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
                    .unwrap();
                let r: Json<Value> = c
                    .query_one("SELECT memory_summary_refresh()", &[])
                    .unwrap()
                    .get(0);
                r.0
            })
        })
        .collect();
    let results: Vec<Value> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let written = results
        .iter()
        .filter(|r| {
            r["refreshed"]
                .as_array()
                .unwrap()
                .contains(&json!("drinks"))
        })
        .count();
    assert_eq!(written, 1, "{results:?}");
    let versions: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.summary_versions WHERE user_id = $1 AND name = 'drinks'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(versions, 1);
    assert_eq!(version(&mut c, "drinks"), 1);
}
