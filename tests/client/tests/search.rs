//! What memory_query's ranking looks like to a client (docs/api.md "memory_query",
//! docs/retrieval.md): the obvious answer first among short facts, `explain` scores that add up
//! to the returned score, dated bullets that keep the token budget (counted independently here),
//! memory_context's dated lines, and empty results that say why.

use memory_ext_client_tests::{self as client, call, unique};
use postgres::Client;
use serde_json::{json, Value};

fn tenant_session() -> (Client, String) {
    client::tenant_session("search_app", "search")
}

fn write(c: &mut Client, req: Value) -> Value {
    call(c, "memory_write", req)
}

fn query(c: &mut Client, req: Value) -> Value {
    call(c, "memory_query", req)
}

fn texts(r: &Value) -> Vec<String> {
    r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap().to_string())
        .collect()
}

/// Writes `facts` in order to one thread, each on its own day of 2023.
fn facts(c: &mut Client, facts: &[&str]) {
    for (n, f) in facts.iter().enumerate() {
        write(
            c,
            json!({"text": f, "thread_id": "facts", "happened_at": format!("2023-03-{:02}T12:00:00Z", n + 1)}),
        );
    }
}

/// The obvious answers (docs/retrieval.md "Neighbours"): short facts written one after the other,
/// with no word of the question in the answer, a rare exact term, and a newer fact that updates
/// an older one.
#[test]
fn the_obvious_answer_comes_first() {
    for (written, question, answer) in obvious_cases() {
        let (mut c, _) = tenant_session();
        facts(&mut c, written);
        let got = texts(&query(&mut c, json!({"query": question, "top_k": 2})));
        assert!(
            got.first().is_some_and(|t| t.ends_with(answer)),
            "{question}: expected {answer:?} first, got {got:?}"
        );
    }
}

type Case = (&'static [&'static str], &'static str, &'static str);

fn obvious_cases() -> [Case; 4] {
    [
        (
            &[
                "Sam is allergic to peanuts.",
                "Sam works as a nurse at the city hospital.",
                "Sam has a dog named Biscuit.",
                "Sam moved from Boston to Denver in 2024.",
            ],
            "where does Sam live now?",
            "Sam moved from Boston to Denver in 2024.",
        ),
        (
            &[
                "Priya's laptop is a ThinkPad.",
                "Priya's flight to Oslo leaves on Thursday.",
                "Priya drinks her coffee black.",
                "Priya is learning to play the cello.",
            ],
            "what instrument is Priya practising?",
            "Priya is learning to play the cello.",
        ),
        (
            &[
                "The staging database runs on host db-stage-2.",
                "Deploys need two approvals.",
                "The on-call rotation changes on Mondays.",
                "Error QX-4471 means the disk quota is exhausted.",
            ],
            "what does QX-4471 mean?",
            "Error QX-4471 means the disk quota is exhausted.",
        ),
        (
            &[
                "Lena's favourite colour is blue.",
                "Lena plays tennis on Sundays.",
                "Lena's favourite colour is green now.",
            ],
            "what is Lena's favourite colour?",
            "Lena's favourite colour is green now.",
        ),
    ]
}

fn signal(item: &Value, name: &str) -> f64 {
    item["explain"]["signals"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {item}"))
}

/// `"rerank": true` (docs/api.md "memory_query"): the obvious answers stay first, the reranked
/// items carry a `rerank` signal that still adds up to the score, and the request field beats
/// the `memory_ext.rerank` setting either way.
#[test]
fn rerank_by_request_and_by_setting() {
    for (written, question, answer) in obvious_cases() {
        let (mut c, _) = tenant_session();
        facts(&mut c, written);
        let r = query(
            &mut c,
            json!({"query": question, "top_k": 3, "rerank": true, "explain": true, "return": "full"}),
        );
        let items = r["items"].as_array().unwrap();
        assert!(
            items[0]["text"].as_str().unwrap().ends_with(answer),
            "{question}: expected {answer:?} first, got {:?}",
            texts(&r)
        );
        assert!(signal(&items[0], "rerank") > 0.0, "{}", items[0]);
        for i in items {
            let sum: f64 = i["explain"]["signals"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!((sum - i["explain"]["score"].as_f64().unwrap()).abs() < 1e-9);
        }
    }
    let (mut c, _) = tenant_session();
    facts(&mut c, obvious_cases()[0].0);
    let ask = |c: &mut Client, extra: Value| {
        let mut req = json!({"query": "where does Sam live now?", "top_k": 1, "explain": true, "return": "full"});
        for (k, v) in extra.as_object().unwrap() {
            req[k] = v.clone();
        }
        signal(&query(c, req)["items"][0], "rerank")
    };
    assert_eq!(ask(&mut c, json!({})), 0.0, "off by default");
    c.batch_execute("SET memory_ext.rerank = on").unwrap();
    assert!(ask(&mut c, json!({})) > 0.0, "on by the setting");
    assert_eq!(
        ask(&mut c, json!({"rerank": false})),
        0.0,
        "off by the request"
    );
    c.batch_execute("SET memory_ext.rerank_depth = 1").unwrap();
    let r = query(
        &mut c,
        json!({"query": "where does Sam live now?", "top_k": 4, "explain": true, "return": "full"}),
    );
    let reranked = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| signal(i, "rerank") > 0.0)
        .count();
    assert_eq!(
        reranked, 1,
        "memory_ext.rerank_depth = 1 reranks one memory"
    );
    let e = c
        .query_one(
            "SELECT memory_query('{\"query\": \"x\", \"rerank\": \"yes\"}')",
            &[],
        )
        .unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22023");
    assert!(db.message().contains("rerank"), "{}", db.message());
}

#[test]
fn explain_scores_add_up_to_the_returned_score() {
    let (mut c, _) = tenant_session();
    for (n, t) in [
        "Ana prefers green tea over coffee.",
        "Ana: I booked the train to Porto.",
        "Bo: Which day do you leave?",
        "Ana: Friday morning, early.",
    ]
    .iter()
    .enumerate()
    {
        let kind = if n == 0 { "semantic" } else { "archival" };
        write(
            &mut c,
            json!({"text": t, "kind": kind, "thread_id": "chat", "actor_id": t.split(':').next().unwrap(),
                             "importance": 1 + n as i64, "happened_at": format!("2023-05-0{}T09:00:00Z", n + 1)}),
        );
    }
    let r = query(
        &mut c,
        json!({"query": "when does Ana leave for Porto?", "top_k": 4, "return": "full", "explain": true}),
    );
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 4);
    let mut pools = vec![];
    for i in items {
        let e = &i["explain"];
        let sum: f64 = e["signals"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .sum();
        let score = e["score"].as_f64().unwrap();
        assert!(
            (sum - score).abs() < 1e-9,
            "signals {sum} != score {score}: {e}"
        );
        // "full" rounds the score to 4 places; explain keeps it whole.
        assert!((i["score"].as_f64().unwrap() - score).abs() < 1e-4);
        // Exactly the signals of the one list (memory_core::rank::SIGNALS).
        let names = memory_core::rank::SIGNALS.map(|s| s.name);
        for k in names {
            assert!(e["signals"][k].is_number(), "{k} missing in {e}");
        }
        assert_eq!(e["signals"].as_object().unwrap().len(), names.len(), "{e}");
        pools.push(e["pool"].as_str().unwrap().to_string());
    }
    assert!(
        pools
            .iter()
            .all(|p| ["bm25+vector", "bm25", "vector", "neighbour"].contains(&p.as_str())),
        "{pools:?}"
    );
    // Ranked by the score explain gives.
    let scores: Vec<f64> = items
        .iter()
        .map(|i| i["explain"]["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // The reply next to the matching turn borrows from it; the fact (semantic) borrows nothing.
    let by_text = |s: &str| {
        items
            .iter()
            .find(|i| i["text"].as_str().unwrap().ends_with(s))
            .unwrap()
    };
    assert!(
        by_text("Friday morning, early.")["explain"]["signals"]["neighbours"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(
        by_text("green tea over coffee.")["explain"]["signals"]["neighbours"]
            .as_f64()
            .unwrap(),
        0.0
    );
    assert_eq!(r["explain"]["pool"].as_u64().unwrap(), 4);
}

#[test]
fn dated_bullets_keep_the_budget() {
    let (mut c, t) = tenant_session();
    for i in 0..25 {
        write(
            &mut c,
            json!({"text": format!("Ana visited city {i} and liked the food there."), "kind": "archival",
                             "thread_id": "trips", "happened_at": format!("2022-{:02}-{:02}T08:00:00Z", 1 + i % 12, 1 + i)}),
        );
    }
    let bpe = tiktoken_rs::cl100k_base().unwrap();
    for budget in [1, 9, 30, 77, 200, 1000] {
        let r = query(
            &mut c,
            json!({"query": "Ana city food", "top_k": 30, "budget_tokens": budget}),
        );
        let lines = texts(&r);
        let n: usize = lines
            .iter()
            .map(|l| bpe.encode_ordinary(l).len())
            .sum::<usize>()
            + r["header"]
                .as_str()
                .map_or(0, |h| bpe.encode_ordinary(h).len());
        assert!(n <= budget, "budget {budget}: {n} tokens");
        assert_eq!(r["used_tokens"].as_u64().unwrap() as usize, n);
        for l in &lines {
            let day = &l[1..11];
            assert!(
                l.starts_with('(') && &l[11..13] == ") " && day.starts_with("2022-"),
                "{l}"
            );
            let city: usize = l
                .split("city ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(
                day,
                format!("2022-{:02}-{:02}", 1 + city % 12, 1 + city),
                "{l}"
            );
        }
        if budget == 1 {
            assert_eq!(r["empty_reason"], "over_budget");
        }
    }
    // memory_context: the same dated lines, and the whole text within its budget.
    let agent = unique("ctx-agent");
    c.execute(
        "SELECT memory_agent($1, $2, 'I plan trips.', 'Name: Ana')",
        &[&agent, &t],
    )
    .unwrap();
    for budget in [260, 330, 600] {
        let ctx: String = c
            .query_one(
                "SELECT memory_context($1, 'trip-thread', 'Ana city food', $2)",
                &[&agent, &budget],
            )
            .unwrap()
            .get(0);
        assert!(
            bpe.encode_ordinary(&ctx).len() <= budget as usize,
            "memory_context over {budget}"
        );
        let lines: Vec<&str> = ctx.lines().filter(|l| l.starts_with("- (")).collect();
        assert!(lines.iter().all(|l| l.starts_with("- (2022-")), "{ctx}");
        if budget == 600 {
            assert!(!lines.is_empty(), "{ctx}");
        }
    }
}

#[test]
fn empty_results_say_why() {
    let (mut c, _) = tenant_session();
    let r = query(&mut c, json!({"query": "anything"}));
    assert_eq!(r["empty_reason"], "no_memories");
    write(
        &mut c,
        json!({"text": "Ana prefers green tea over coffee.", "category": "preferences"}),
    );
    let r = query(
        &mut c,
        json!({"query": "tea", "filters": {"category": "tasks"}}),
    );
    assert_eq!(r["empty_reason"], "no_match");
    let r = query(&mut c, json!({"query": "tea", "threshold": 0.999}));
    assert_eq!(r["empty_reason"], "below_threshold");
    let r = query(&mut c, json!({"query": "tea"}));
    assert!(r.get("empty_reason").is_none(), "{r}");
}
