//! Extraction and ended runs in the background worker (docs/design.md "Extraction", docs/api.md
//! "Episodes"), on the server of scripts/test.sh worker, with the stand-in (tests/standin)
//! playing the LLM from scripted answers: good, slow, garbage, refusing, partial, failing.
//!
//! Each test turns on the jobs and the model it needs (ALTER SYSTEM + reload) and puts the
//! server's settings back; tests run one at a time (`--test-threads=1`).

use memory_ext_standin::StandIn;
use memory_ext_worker_tests::{admin, poll, set_system, unique, worker_pid};
use postgres::types::Json;
use postgres::Client;
use serde_json::Value;
use std::time::{Duration, Instant};

const BASE_JOBS: &str = "ttl_sweep,purge,backfill";

/// The worker's jobs plus `extract` / `episodes`, the stand-in as the LLM with `model`, and
/// `extra` settings.
fn llm(c: &mut Client, standin: &StandIn, model: &str, jobs: &str, extra: &[(&str, Option<&str>)]) {
    let url = format!("{}/v1", standin.base());
    let jobs = format!("{BASE_JOBS},{jobs}");
    let mut s: Vec<(&str, Option<&str>)> = vec![
        ("memory_ext.llm_url", Some(&url)),
        ("memory_ext.llm_model", Some(model)),
        ("memory_ext.worker_jobs", Some(&jobs)),
    ];
    s.extend_from_slice(extra);
    set_system(c, &s);
}

fn reset(c: &mut Client, extra: &[&str]) {
    let mut s: Vec<(&str, Option<&str>)> = vec![
        ("memory_ext.llm_url", None),
        ("memory_ext.llm_model", None),
        ("memory_ext.worker_jobs", Some(BASE_JOBS)),
    ];
    s.extend(extra.iter().map(|n| (*n, None)));
    set_system(c, &s);
}

fn append(c: &mut Client, user: &str, thread: &str, role: &str, text: &str) -> i64 {
    let r = c
        .query_one(
            "SELECT set_config('memory_ext.user_id', $1, false), (message_append($2, $3, $4, name => 'Sam') ->> 'seq')::bigint",
            &[&user, &thread, &role, &text],
        )
        .unwrap();
    r.get(1)
}

/// Waits until the thread's watermark reaches `seq`.
fn extracted(c: &mut Client, user: &str, thread: &str, seq: i64, secs: u64) -> bool {
    poll(secs, || {
        let got: Option<i64> = c
            .query_opt(
                "SELECT extracted_seq FROM memory.extractions WHERE user_id = $1 AND thread_id = $2",
                &[&user, &thread],
            )
            .ok()
            .flatten()
            .map(|r| r.get(0));
        (got >= Some(seq)).then_some(())
    })
    .is_some()
}

fn texts(c: &mut Client, user: &str, kind: &str) -> Vec<String> {
    c.query(
        "SELECT text FROM memory.items WHERE user_id = $1 AND kind = $2 AND state = 'active' ORDER BY created_at",
        &[&user, &kind],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

fn last_counts(c: &mut Client) -> Option<Value> {
    c.query_one(
        "SELECT last_counts FROM memory.worker_status WHERE job = 'extract'",
        &[],
    )
    .ok()?
    .get::<_, Option<Json<Value>>>(0)
    .map(|j| j.0)
}

fn retry_state(c: &mut Client, user: &str, thread: &str) -> (i64, i32, Option<String>) {
    let r = c
        .query_one(
            "SELECT extracted_seq, attempts, last_error FROM memory.extractions WHERE user_id = $1 AND thread_id = $2",
            &[&user, &thread],
        )
        .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

#[test]
fn extraction_writes_what_the_llm_says_and_nothing_else() {
    let standin = StandIn::start(0);
    let mut c = admin();
    let user = unique("ext-llm");
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    // A fact the model is shown as known and supersedes.
    c.execute(
        "SELECT memory_write('{\"text\": \"Sam lives in Boston.\", \"actor_id\": \"Sam\"}')",
        &[],
    )
    .unwrap();
    let t = "ext-llm-t";
    append(&mut c, &user, t, "user", "FACT: Sam moved to Denver in 2024. SUPERSEDES: Sam lives in Boston.; FACT: Sam is allergic to peanuts.");
    append(&mut c, &user, t, "assistant", "FACT: Sam owns a yacht.");
    append(&mut c, &user, t, "user", "INSIGHT: Sam prefers short answers.; PROCEDURE: Deploying the blog | Run make build. | Copy dist to the server.");
    let last = append(
        &mut c,
        &user,
        t,
        "user",
        "Just chatting about the weather today, nothing else.",
    );
    llm(&mut c, &standin, "extract-script", "extract", &[]);
    assert!(
        extracted(&mut c, &user, t, last, 60),
        "the worker did not extract the thread"
    );

    let facts = texts(&mut c, &user, "semantic");
    assert_eq!(
        facts,
        vec![
            "Sam moved to Denver in 2024.",
            "Sam is allergic to peanuts.",
            "Sam owns a yacht."
        ],
        "exactly the scripted facts (the assistant's turn included: the model said so)"
    );
    assert_eq!(
        texts(&mut c, &user, "insight"),
        vec!["Sam prefers short answers."]
    );
    assert_eq!(
        texts(&mut c, &user, "procedural"),
        vec!["Deploying the blog: 1. Run make build. 2. Copy dist to the server."]
    );
    let (state, successor_ok): (String, bool) = {
        let r = c
            .query_one(
                "SELECT state, superseded_by = (SELECT id FROM memory.items WHERE user_id = $1 AND text LIKE 'Sam moved%')
                 FROM memory.items WHERE user_id = $1 AND text = 'Sam lives in Boston.'",
                &[&user],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((state.as_str(), successor_ok), ("superseded", true));
    let r = c
        .query_one(
            "SELECT metadata ->> 'method', metadata ->> 'source', actor_id FROM memory.items WHERE user_id = $1 AND text = 'Sam is allergic to peanuts.'",
            &[&user],
        )
        .unwrap();
    assert_eq!(
        (
            r.get::<_, String>(0),
            r.get::<_, String>(1),
            r.get::<_, Option<String>>(2)
        ),
        ("llm".into(), "extraction".into(), Some("Sam".into()))
    );
    // The cost is on record: per tenant and day, and in the job's last counts.
    let (calls, tokens_in, tokens_out): (i32, i64, i64) = {
        let r = c
            .query_one(
                "SELECT calls, tokens_in, tokens_out FROM memory.extraction_usage WHERE user_id = $1",
                &[&user],
            )
            .unwrap();
        (r.get(0), r.get(1), r.get(2))
    };
    assert!(
        calls >= 1 && tokens_in > 0 && tokens_out > 0,
        "{calls} {tokens_in} {tokens_out}"
    );
    // (The job records its counts after its pass, which commits the batches first: polled.)
    let counted = poll(30, || {
        let v = last_counts(&mut c)?;
        (v["llm_calls"].as_i64() >= Some(1)).then_some(())
    });
    assert!(counted.is_some(), "{:?}", last_counts(&mut c));
    // Nothing new: another pass changes nothing.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(texts(&mut c, &user, "semantic").len(), 3);
    reset(&mut c, &[]);
}

/// Consent holds through extraction: the model files a move under another category
/// (`location`) and says it supersedes the user's own `city` memory. That is an inferred change
/// to a protected memory, so it waits as a proposal; the city memory stays active. On 0.8.0 the
/// gate judged only the new fact's category, and the city memory was superseded.
#[test]
fn extraction_cannot_supersede_a_protected_memory_without_consent() {
    let standin = StandIn::start(0);
    let mut c = admin();
    let user = unique("ext-consent");
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    c.execute(
        "SELECT memory_write('{\"text\": \"Sam lives in Boston.\", \"category\": \"city\", \"actor_id\": \"Sam\"}')",
        &[],
    )
    .unwrap();
    let t = "ext-consent-t";
    append(
        &mut c,
        &user,
        t,
        "user",
        "FACT: Sam is allergic to peanuts.",
    );
    let last = append(
        &mut c,
        &user,
        t,
        "user",
        "FACT: Sam moved to Madrid. SUPERSEDES: Sam lives in Boston. CATEGORY: location",
    );
    llm(&mut c, &standin, "extract-script", "extract", &[]);
    assert!(
        extracted(&mut c, &user, t, last, 60),
        "the worker did not extract the thread"
    );
    assert_eq!(
        texts(&mut c, &user, "semantic"),
        vec!["Sam lives in Boston.", "Sam is allergic to peanuts."],
        "the city memory stays; the move is not written"
    );
    let proposals: Vec<(String, String, String)> = c
        .query(
            "SELECT category, text, status FROM memory.proposals WHERE user_id = $1",
            &[&user],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    // Filed under the protected category it would change (as memory_write does: regress
    // consent.sql), so the user sees it as a change to their city.
    assert_eq!(
        proposals,
        vec![(
            "city".to_string(),
            "Sam moved to Madrid.".to_string(),
            "pending".to_string()
        )]
    );
    // Approved by the user, the supersede is applied as the model asked.
    let state: String = c
        .query_one(
            "SELECT memory_approve((SELECT id FROM memory.proposals WHERE user_id = $1)) ->> 'status'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(state, "approved");
    assert_eq!(
        texts(&mut c, &user, "semantic"),
        vec!["Sam is allergic to peanuts.", "Sam moved to Madrid."]
    );
    let (category, old_state): (Option<String>, String) = {
        let r = c
            .query_one(
                "SELECT (SELECT category FROM memory.items WHERE user_id = $1 AND text = 'Sam moved to Madrid.'),
                        (SELECT state FROM memory.items WHERE user_id = $1 AND text = 'Sam lives in Boston.')",
                &[&user],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!(
        (category.as_deref(), old_state.as_str()),
        (Some("location"), "superseded")
    );
    reset(&mut c, &[]);
}

#[test]
fn an_unusable_answer_goes_through_the_rules_at_once() {
    let standin = StandIn::start(0);
    let mut c = admin();
    // Prose, a refusal: asked again, a model at temperature 0 answers the same.
    for model in ["extract-garbage", "extract-refuse"] {
        let user = unique("ext-unusable");
        let t = "ext-unusable-t";
        let last = append(
            &mut c,
            &user,
            t,
            "user",
            "I'm allergic to peanuts. FACT: Sam is allergic to peanuts.",
        );
        llm(&mut c, &standin, model, "extract", &[]);
        assert!(
            extracted(&mut c, &user, t, last, 30),
            "{model}: the batch was not read"
        );
        assert_eq!(
            texts(&mut c, &user, "semantic"),
            vec!["Sam is allergic to peanuts."],
            "{model}: the rules' fact"
        );
        let (_, attempts, error) = retry_state(&mut c, &user, t);
        assert_eq!(attempts, 0, "{model}: retried");
        assert!(
            error.as_deref().unwrap_or_default().contains("unusable"),
            "{model}: {error:?}"
        );
        assert_eq!(standin.hits(model), 1, "{model}: asked more than once");
    }
    reset(&mut c, &[]);
}

#[test]
fn a_failing_llm_moves_nothing_retries_with_backoff_then_falls_back_to_the_rules() {
    let standin = StandIn::start(0);
    let mut c = admin();
    // The endpoint fails (HTTP 500): worth a retry later.
    let model = "extract-fail";
    {
        let user = unique("ext-bad");
        let t = "ext-bad-t";
        let last = append(
            &mut c,
            &user,
            t,
            "user",
            "I'm allergic to peanuts. FACT: Sam is allergic to peanuts.",
        );
        llm(&mut c, &standin, model, "extract", &[]);
        let failed = poll(30, || {
            let r = c
            .query_opt(
                "SELECT attempts FROM memory.extractions WHERE user_id = $1 AND thread_id = $2 AND attempts > 0",
                &[&user, &t],
            )
            .ok()
            .flatten()?;
            Some(r.get::<_, i32>(0))
        });
        assert_eq!(failed, Some(1), "{model}: no failed attempt on record");
        let (seq, attempts, error) = retry_state(&mut c, &user, t);
        assert_eq!((seq, attempts), (0, 1), "{model}: the watermark moved");
        assert!(error.is_some(), "{model}: no error recorded");
        assert!(
            texts(&mut c, &user, "semantic").is_empty(),
            "{model}: something was written"
        );
        // The retry waits (30 s for the first): a few passes later, still one attempt.
        std::thread::sleep(Duration::from_secs(3));
        assert_eq!(
            retry_state(&mut c, &user, t).1,
            1,
            "{model}: retried without backoff"
        );
        // After the last allowed attempt the batch goes through the rules.
        c.execute(
        "UPDATE memory.extractions SET attempts = 5, retry_at = now() WHERE user_id = $1 AND thread_id = $2",
        &[&user, &t],
    )
    .unwrap();
        assert!(
            extracted(&mut c, &user, t, last, 30),
            "{model}: no fallback to the rules"
        );
        assert_eq!(
            texts(&mut c, &user, "semantic"),
            vec!["Sam is allergic to peanuts."],
            "{model}"
        );
        let (_, attempts, error) = retry_state(&mut c, &user, t);
        assert_eq!(attempts, 0);
        assert!(
            error.unwrap_or_default().contains("rules"),
            "{model}: the fallback is not on record"
        );
    }
    reset(&mut c, &[]);
}

#[test]
fn a_partial_answer_keeps_its_valid_entries_and_caps_hold() {
    let standin = StandIn::start(0);
    let mut c = admin();
    let user = unique("ext-partial");
    let t = "ext-partial-t";
    let last = append(&mut c, &user, t, "user", "FACT: Sam plays the cello.; FACT: Sam speaks Greek.; FACT: Sam collects stamps.; FACT: Sam runs marathons.");
    llm(
        &mut c,
        &standin,
        "extract-partial",
        "extract",
        &[("memory_ext.extract_daily_cap", Some("2"))],
    );
    assert!(extracted(&mut c, &user, t, last, 60));
    // Four valid facts in one turn: 3 per turn, then 2 per day; the invalid entries never.
    assert_eq!(
        texts(&mut c, &user, "semantic"),
        vec!["Sam plays the cello.", "Sam speaks Greek."]
    );
    let counted = poll(30, || {
        let v = last_counts(&mut c)?;
        (v["rejected"] == 3 && v["capped"] == 2).then_some(())
    });
    assert!(counted.is_some(), "{:?}", last_counts(&mut c));
    // The cap is per day: more turns today write nothing more.
    let last = append(&mut c, &user, t, "user", "FACT: Sam bakes bread.");
    assert!(extracted(&mut c, &user, t, last, 60));
    assert_eq!(texts(&mut c, &user, "semantic").len(), 2);
    reset(&mut c, &["memory_ext.extract_daily_cap"]);
}

/// Exactly once: 20 SIGKILLs of the worker while it extracts (each a crash restart of the
/// server), and every scripted fact is written once, none twice, none lost.
#[test]
fn twenty_worker_kills_lose_and_double_no_extraction() {
    let standin = StandIn::start(0);
    let mut c = admin();
    let user = unique("ext-kill");
    let (threads, per_thread) = (6, 30);
    let mut expected = vec![];
    let mut lasts = vec![];
    for th in 0..threads {
        let t = format!("kill-t{th}");
        let mut last = 0;
        for i in 0..per_thread {
            let fact = format!(
                "Fact {i} of notebook {th} is written in colour {}.",
                th * 100 + i
            );
            last = append(&mut c, &user, &t, "user", &format!("FACT: {fact}"));
            expected.push(fact);
        }
        lasts.push((t, last));
    }
    llm(
        &mut c,
        &standin,
        "extract-slow-800",
        "extract",
        &[
            ("memory_ext.extract_batch", Some("3")),
            ("memory_ext.extract_daily_cap", Some("100000")),
            // Distinct facts stay distinct memories however alike their vectors.
            ("memory_ext.merge_threshold", Some("1")),
        ],
    );
    let mut kills = 0;
    let started = Instant::now();
    while kills < 20 && started.elapsed() < Duration::from_secs(600) {
        let mut c = admin();
        let Some(pid) = worker_pid(&mut c, 30) else {
            continue;
        };
        // Let it get into a batch (each waits 800 ms on the stand-in).
        std::thread::sleep(Duration::from_millis(300 + (kills as u64 * 137) % 700));
        drop(c);
        let ok = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        if ok.success() {
            kills += 1;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(kills, 20, "could not kill the worker 20 times");
    let mut c = admin();
    // The kills came while there was work left (else they tested nothing).
    let read: i64 = c
        .query_one(
            "SELECT coalesce(sum(extracted_seq), 0)::bigint FROM memory.extractions WHERE user_id = $1",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert!(
        read < (threads * per_thread) as i64,
        "extraction was over before the 20th kill"
    );
    for (t, last) in &lasts {
        assert!(
            extracted(&mut c, &user, t, *last, 300),
            "thread {t} was not finished after the kills"
        );
    }
    let mut got = texts(&mut c, &user, "semantic");
    got.sort();
    let mut want = expected.clone();
    want.sort();
    assert_eq!(got.len(), want.len(), "lost or extra memories");
    assert_eq!(got, want);
    // No write was repeated: a repeat would have been an exact duplicate (a 'skipped' create).
    let skipped: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.events WHERE user_id = $1 AND op = 'create' AND status = 'skipped'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(skipped, 0, "a fact was written twice");
    let adds: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.history WHERE user_id = $1 AND event = 'ADD'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(adds as usize, want.len(), "history shows a repeated write");
    reset(
        &mut c,
        &[
            "memory_ext.extract_batch",
            "memory_ext.extract_daily_cap",
            "memory_ext.merge_threshold",
        ],
    );
}

/// run_end and message_append return at once while the LLM takes 5 s; the worker writes the
/// episode and compacts afterwards. An idle thread gets its episode without run_end.
#[test]
fn ended_runs_are_finished_by_the_worker_without_holding_the_application() {
    let standin = StandIn::start(0);
    let mut c = admin();
    llm(
        &mut c,
        &standin,
        "extract-slow-5000",
        "episodes",
        &[
            ("memory_ext.http_timeout_ms", Some("8000")),
            ("memory_ext.run_idle_timeout", Some("2s")),
        ],
    );
    let user = unique("ext-run");
    let t = "run-t";
    let mut slowest = Duration::ZERO;
    for i in 0..30 {
        let started = Instant::now();
        append(
            &mut c,
            &user,
            t,
            if i % 2 == 0 { "user" } else { "assistant" },
            &format!("Message {i} about planning the Porto trip in May with a budget."),
        );
        slowest = slowest.max(started.elapsed());
    }
    let started = Instant::now();
    let out: Json<Value> = c
        .query_one("SELECT run_end($1, 'run-1', 300)", &[&t])
        .unwrap()
        .get(0);
    let run_end_took = started.elapsed();
    assert_eq!(out.0["run_id"], "run-1");
    // Neither call waited for the 5 s model.
    assert!(
        run_end_took < Duration::from_secs(2),
        "run_end took {run_end_took:?}"
    );
    assert!(
        slowest < Duration::from_secs(2),
        "message_append took {slowest:?}"
    );
    // The worker: the episode, then compaction (300 tokens is far exceeded).
    let done = poll(90, || {
        let r = c
            .query_one(
                "SELECT (SELECT count(*) FROM memory.files WHERE user_id = $1 AND path LIKE 'episodes/%' AND metadata ->> 'run_id' = 'run-1'),
                        (SELECT count(*) FROM memory.messages WHERE user_id = $1 AND thread_id = 'run-t' AND is_summary),
                        (SELECT count(*) FROM memory.run_ends WHERE user_id = $1)",
                &[&user],
            )
            .ok()?;
        (r.get::<_, i64>(0) == 1 && r.get::<_, i64>(1) == 1 && r.get::<_, i64>(2) == 0)
            .then_some(())
    });
    assert!(
        done.is_some(),
        "the worker did not write the episode and compact"
    );
    let in_context: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.messages WHERE user_id = $1 AND thread_id = 'run-t' AND in_context AND NOT is_summary",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert!(in_context <= 11, "{in_context} messages still in context");

    // Idle: two messages, no run_end, 2 s of quiet: an episode.
    let idle = "idle-t";
    append(
        &mut c,
        &user,
        idle,
        "user",
        "Can we book the hotel near the river?",
    );
    append(
        &mut c,
        &user,
        idle,
        "assistant",
        "Booked the hotel near the river for May.",
    );
    let episode = poll(90, || {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM memory.files WHERE user_id = $1 AND path LIKE 'episodes/%' AND metadata ->> 'thread_id' = 'idle-t'",
                &[&user],
            )
            .ok()?
            .get(0);
        (n == 1).then_some(())
    });
    assert!(episode.is_some(), "no episode for the idle run");
    // Nothing new since: no second episode.
    std::thread::sleep(Duration::from_secs(5));
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.files WHERE user_id = $1 AND path LIKE 'episodes/%' AND metadata ->> 'thread_id' = 'idle-t'",
            &[&user],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    reset(
        &mut c,
        &["memory_ext.http_timeout_ms", "memory_ext.run_idle_timeout"],
    );
}

/// Tenants take turns in the worker's queue of ended runs (sql/queries/episodes_due.sql): one
/// tenant's flood of 120 run ends, enqueued before another tenant's one, delays it by at most a
/// turn. Served first-in-first-out (0.8.0), all 120 episodes came first.
#[test]
fn one_tenants_flood_of_run_ends_does_not_delay_another_tenant() {
    let mut c = admin();
    set_system(
        &mut c,
        &[(
            "memory_ext.worker_jobs",
            Some("ttl_sweep,purge,backfill,episodes"),
        )],
    );
    let (flood, other) = (unique("fair-flood"), unique("fair-other"));
    for (user, n) in [(&flood, 120), (&other, 1)] {
        c.execute(
            "SELECT set_config('memory_ext.user_id', $1, false),
                    message_append($1 || '-t' || i, 'user', 'We planned the garden, part ' || i || '.', $1),
                    message_append($1 || '-t' || i, 'assistant', 'Noted the garden plan, part ' || i || '.', $1)
             FROM generate_series(1, $2) i",
            &[user, &n],
        )
        .unwrap();
    }
    c.execute("RESET memory_ext.user_id", &[]).unwrap();
    // Every run end in one transaction, the flood's first: the worker sees them all at once.
    let mut tx = c.transaction().unwrap();
    tx.execute(
        "SELECT run_end($1 || '-t' || i) FROM generate_series(1, 120) i ORDER BY i",
        &[&flood],
    )
    .unwrap();
    tx.execute("SELECT run_end($1 || '-t1')", &[&other])
        .unwrap();
    tx.commit().unwrap();
    let done = poll(120, || {
        c.query_opt(
            "SELECT created_at FROM memory.files WHERE user_id = $1 AND path LIKE 'episodes/%'",
            &[&other],
        )
        .ok()
        .flatten()
        .map(|r| r.get::<_, std::time::SystemTime>(0))
    });
    let at = done.expect("the other tenant's run never got its episode");
    let before: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.files WHERE user_id = $1 AND path LIKE 'episodes/%' AND created_at < $2",
            &[&flood, &at],
        )
        .unwrap()
        .get(0);
    assert!(
        before <= 1,
        "{before} of the flooding tenant's episodes were written before the other tenant's one"
    );
    // The flood is still served, all of it.
    let all = poll(300, || {
        let left: i64 = c
            .query_one(
                "SELECT count(*) FROM memory.run_ends WHERE user_id = $1",
                &[&flood],
            )
            .ok()?
            .get(0);
        (left == 0).then_some(())
    });
    assert!(all.is_some(), "the flood's runs were not all ended");
    reset(&mut c, &[]);
}

/// Rows of `user` left in any tenant table (memory._tenant_tables: every table with a user_id).
fn rows_left(c: &mut Client, user: &str) -> i64 {
    c.query_one(
        "SELECT coalesce(sum((xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %s WHERE user_id = %L', t, $1::text), false, true, '')))[1]::text::bigint), 0)::bigint
         FROM memory._tenant_tables() t",
        &[&user],
    )
    .unwrap()
    .get(0)
}

/// 0.13.0: `memory_erase_tenant` of a tenant whose run ends the worker is processing failed
/// 3 of 3 times on 0.12.0 (a deadlock with the worker, or "thread still has messages" from rows
/// the worker committed after the erasure deleted them), and each time the whole erasure rolled
/// back. Now the erasure waits for the worker's work on the tenant and the worker leaves a
/// tenant being erased alone: it succeeds on the first call, and nothing of the tenant comes
/// back afterwards.
#[test]
fn erasing_a_tenant_the_worker_is_working_on_succeeds_at_once() {
    let standin = StandIn::start(0);
    let mut c = admin();
    llm(
        &mut c,
        &standin,
        "extract-slow-3000",
        "episodes,extract",
        &[("memory_ext.http_timeout_ms", Some("8000"))],
    );
    for round in 0..3 {
        let user = unique(&format!("erase-busy-{round}"));
        for t in ["t1", "t2", "t3"] {
            // Thread ids of its own: run_end finds its thread by id across tenants here.
            let t = &format!("{user}-{t}");
            for i in 0..12 {
                append(
                    &mut c,
                    &user,
                    t,
                    if i % 2 == 0 { "user" } else { "assistant" },
                    &format!("Message {i} of {t}: my sister Maya is moving to Lisbon in June."),
                );
            }
            c.query_one("SELECT run_end($1, 'run-1', 300)", &[&t])
                .unwrap();
        }
        // The worker is inside a transaction for this tenant (it holds the tenant's erasure lock
        // shared, src/ops/erase.rs) while the slow model answers.
        let busy = poll(60, || {
            let n: i64 = c
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 7323
                       AND objid = hashtext($1)::oid AND mode = 'ShareLock' AND granted",
                    &[&user],
                )
                .ok()?
                .get(0);
            (n > 0).then_some(())
        });
        assert!(
            busy.is_some(),
            "round {round}: the worker never took up the tenant"
        );
        let receipt = c.query_one(
            "SELECT memory_erase_tenant($1, 'the user asked') ->> 'total'",
            &[&user],
        );
        let receipt = receipt.unwrap_or_else(|e| panic!("round {round}: the erasure failed: {e}"));
        let total: Option<String> = receipt.get(0);
        assert!(
            total.is_some_and(|t| t != "0"),
            "round {round}: nothing erased"
        );
        // What the worker was doing ends without bringing the tenant back.
        std::thread::sleep(Duration::from_secs(8));
        assert_eq!(
            rows_left(&mut c, &user),
            0,
            "round {round}: rows of the erased tenant"
        );
    }
    reset(&mut c, &["memory_ext.http_timeout_ms"]);
}
