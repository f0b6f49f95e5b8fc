//! memory_consolidate with a real LLM endpoint (the stand-in on 127.0.0.1): batched same-fact
//! checks, and what happens when the answers are garbage, partial, late, or over the day's cap.
//! (The rule used without an LLM, TTL, purge and restore are in pg_regress lifecycle.sql.)

use memory_ext_client_tests::{admin, unique};
use memory_ext_standin::StandIn;
use postgres::types::Json;
use postgres::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A 384-d unit vector: `c` on axis `a`, the rest on axis `b`.
fn v(a: usize, b: usize, c: f64) -> Value {
    let mut x = vec![0.0; 384];
    x[a] = c;
    x[b] = (1.0 - c * c).sqrt();
    json!(x)
}

/// A superuser session for a fresh tenant with `pairs` near-duplicate pairs (cosine 0.9, in the
/// band between link and merge thresholds; write-time linking off), judged by `judge`.
fn tenant_with_pairs(judge: &str, pairs: usize) -> (Client, StandIn) {
    let standin = StandIn::start(0);
    let mut c = admin();
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{}';
         SET memory_ext.llm_url = '{}/v1';
         SET memory_ext.llm_model = 'judge-{judge}';
         SET memory_ext.link_threshold = 0.99;",
        unique("consol"),
        standin.base()
    ))
    .unwrap();
    for i in 0..pairs {
        for (text, vec) in [
            (
                format!("Kai waters plant {i} every morning."),
                v(2 * i, 2 * i + 1, 1.0),
            ),
            (
                format!("Kai waters plant {i} each morning."),
                v(2 * i, 2 * i + 1, 0.9),
            ),
        ] {
            c.execute(
                "SELECT memory_write($1)",
                &[&Json(
                    json!({"text": text, "importance": 2, "embedding": vec}),
                )],
            )
            .unwrap();
        }
    }
    c.batch_execute("RESET memory_ext.link_threshold").unwrap();
    (c, standin)
}

fn consolidate(c: &mut Client) -> Value {
    let r: Json<Value> = c
        .query_one("SELECT memory_consolidate()", &[])
        .unwrap()
        .get(0);
    r.0
}

fn active(c: &mut Client) -> i64 {
    c.query_one(
        "SELECT count(*) FROM memory.items WHERE user_id = current_setting('memory_ext.user_id') AND state = 'active'",
        &[],
    )
    .unwrap()
    .get(0)
}

#[test]
fn one_prompt_judges_a_batch_and_merges() {
    let (mut c, standin) = tenant_with_pairs("same", 3);
    let r = consolidate(&mut c);
    assert_eq!(r["llm_calls"], 1, "{r}");
    assert_eq!(standin.hits("judge-same"), 1);
    assert_eq!(r["pairs_checked"], 3, "{r}");
    assert_eq!(r["merged"], 3, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
    assert_eq!(active(&mut c), 3);
    // Fingerprinted: nothing is asked again.
    let again = consolidate(&mut c);
    assert_eq!(again["llm_calls"], 0, "{again}");
    assert_eq!(again["pairs_checked"], 0, "{again}");
}

#[test]
fn a_judge_saying_different_only_links() {
    let (mut c, _s) = tenant_with_pairs("different", 2);
    let r = consolidate(&mut c);
    assert_eq!(r["merged"], 0, "{r}");
    assert_eq!(r["linked"], 2, "{r}");
    assert_eq!(active(&mut c), 4);
}

#[test]
fn garbage_answers_change_nothing_and_are_retried_next_run() {
    let (mut c, standin) = tenant_with_pairs("garbage", 2);
    let r = consolidate(&mut c);
    assert_eq!(r["llm_calls"], 1, "{r}");
    assert_eq!(r["errors"], 1, "{r}");
    assert_eq!(r["pairs_checked"], 0, "{r}");
    assert_eq!(r["merged"], 0, "{r}");
    assert_eq!(active(&mut c), 4);
    // Not fingerprinted: the next run asks again.
    let r = consolidate(&mut c);
    assert_eq!(r["llm_calls"], 1, "{r}");
    assert_eq!(standin.hits("judge-garbage"), 2);
}

#[test]
fn a_partly_valid_batch_applies_the_valid_verdicts_only() {
    let (mut c, _s) = tenant_with_pairs("partial", 3);
    let r = consolidate(&mut c);
    // pair 1 "same" (merged); pair 2 an invalid verdict, pair 3 none: two errors, left alone.
    assert_eq!(r["pairs_checked"], 1, "{r}");
    assert_eq!(r["merged"], 1, "{r}");
    assert_eq!(r["errors"], 2, "{r}");
    assert_eq!(active(&mut c), 5);
}

#[test]
fn a_slow_llm_times_out_and_the_run_goes_on() {
    let (mut c, _s) = tenant_with_pairs("slow-5000", 2);
    c.batch_execute("SET memory_ext.http_timeout_ms = 300")
        .unwrap();
    let t = Instant::now();
    let r = consolidate(&mut c);
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(r["errors"], 1, "{r}");
    assert_eq!(r["merged"], 0, "{r}");
    assert_eq!(active(&mut c), 4);
}

#[test]
fn the_daily_prompt_cap_holds() {
    let (mut c, standin) = tenant_with_pairs("same", 2);
    c.batch_execute("SET memory_ext.consolidation_max_llm_calls = 0")
        .unwrap();
    let r = consolidate(&mut c);
    assert_eq!(r["llm_calls"], 0, "{r}");
    assert_eq!(r["pairs_checked"], 0, "{r}");
    assert_eq!(standin.hits("judge-same"), 0);
    assert_eq!(active(&mut c), 4);
}

/// A pseudo-random 384-d unit vector (cosine to any other ~0 ± 0.05: no near pairs).
fn random_unit(seed: u64) -> Value {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f64> = (0..384)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    let n = v.iter().map(|a| a * a).sum::<f64>().sqrt();
    json!(v.iter().map(|a| a / n).collect::<Vec<_>>())
}

#[test]
fn runs_cover_more_candidates_than_one_pool_over_successive_runs() {
    // One near-duplicate pair, then 520 newer unrelated memories: the first run's pool (the
    // newest 500) misses the pair; the next run takes the unexamined memories first and finds it.
    let mut c = admin();
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{}'; SET memory_ext.link_threshold = 0.99",
        unique("rotate")
    ))
    .unwrap();
    for (text, vec) in [
        ("Kai likes green tea.", v(0, 1, 1.0)),
        ("Kai really likes green tea.", v(0, 1, 0.9)),
    ] {
        c.execute(
            "SELECT memory_write($1)",
            &[&Json(
                json!({"text": text, "importance": 2, "embedding": vec}),
            )],
        )
        .unwrap();
    }
    let batch: Vec<Value> = (0..520)
        .map(|i| json!({"text": format!("Unrelated note number {i}."), "importance": 2, "embedding": random_unit(i + 1)}))
        .collect();
    c.execute("SELECT memory_write_batch($1)", &[&Json(json!(batch))])
        .unwrap();
    c.batch_execute("RESET memory_ext.link_threshold").unwrap();
    let first = consolidate(&mut c);
    assert_eq!(first["merged"], 0, "{first}");
    let second = consolidate(&mut c);
    assert_eq!(second["merged"], 1, "{second}");
    assert_eq!(active(&mut c), 521);
}

/// A fresh tenant with two pending `goals` proposals (a corroborate field) that say the same in
/// other words the write-time rules cannot match, judged by `judge`.
fn tenant_with_paraphrases(judge: &str) -> (Client, StandIn) {
    let standin = StandIn::start(0);
    let mut c = admin();
    c.batch_execute(&format!(
        "SET memory_ext.user_id = '{}';
         SET memory_ext.llm_url = '{}/v1';
         SET memory_ext.llm_model = 'judge-{judge}';",
        unique("para"),
        standin.base()
    ))
    .unwrap();
    for text in [
        "Mia's dream is to run a marathon.",
        "Mia hopes to finish a marathon.",
    ] {
        let r: Json<Value> = c
            .query_one(
                "SELECT memory_write($1)",
                &[&Json(
                    json!({"text": text, "category": "goals", "source": "inferred"}),
                )],
            )
            .unwrap()
            .get(0);
        assert_eq!(r.0["event"], "proposed", "{}", r.0);
    }
    (c, standin)
}

fn statuses(c: &mut Client) -> Vec<String> {
    c.query(
        "SELECT status FROM memory.proposals WHERE user_id = current_setting('memory_ext.user_id') ORDER BY created_at, id",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

#[test]
fn the_llm_corroborates_proposals_that_say_the_same_in_other_words() {
    let (mut c, standin) = tenant_with_paraphrases("same");
    let r = consolidate(&mut c);
    assert_eq!(r["corroborated"], 1, "{r}");
    assert_eq!(standin.hits("judge-same"), 1);
    assert_eq!(statuses(&mut c), vec!["approved", "applied"]);
    let (text, by): (String, String) = {
        let row = c
            .query_one(
                "SELECT i.text, p.decided_by FROM memory.proposals p JOIN memory.items i ON i.user_id = p.user_id AND i.id = p.memory_id
                 WHERE p.user_id = current_setting('memory_ext.user_id') AND p.status = 'approved'",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(text, "Mia's dream is to run a marathon.");
    assert!(by.starts_with("corroborated by proposal "), "{by}");
    assert_eq!(active(&mut c), 1);
}

#[test]
fn proposals_the_llm_reads_as_different_stay_pending_and_are_not_asked_again() {
    let (mut c, standin) = tenant_with_paraphrases("different");
    let r = consolidate(&mut c);
    assert_eq!(r["corroborated"], 0, "{r}");
    assert_eq!(statuses(&mut c), vec!["pending", "pending"]);
    consolidate(&mut c);
    assert_eq!(
        standin.hits("judge-different"),
        1,
        "a judged pair is not asked again"
    );
    assert_eq!(active(&mut c), 0);
}
