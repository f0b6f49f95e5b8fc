//! memory_write / memory_query through a real driver: allowlists, every filter, the token
//! budget (counted independently here), threshold, soft deletes, the delta header, tenant
//! isolation, the bulk path, concurrent writers and readers, and the plan at 20k memories.

use memory_ext_client_tests::{
    self as client, admin, call, connect_as, ensure_role, sqlstate, unique,
};
use postgres::types::Json;
use postgres::Client;
use serde_json::{json, Value};

/// An ordinary role acting for a fresh tenant.
fn tenant_session() -> (Client, String) {
    client::tenant_session("me_app", "mem")
}

fn write(c: &mut Client, req: Value) -> Value {
    call(c, "memory_write", req)
}

fn query(c: &mut Client, req: Value) -> Value {
    call(c, "memory_query", req)
}

fn query_err(c: &mut Client, req: Value) -> String {
    sqlstate(
        &c.query_one("SELECT memory_query($1)", &[&Json(req)])
            .unwrap_err(),
    )
}

/// The bullets as returned: "(YYYY-MM-DD) [category] text".
fn lines(r: &Value) -> Vec<String> {
    r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap().to_string())
        .collect()
}

/// The bullets without the day they happened, which every bullet starts with.
fn texts(r: &Value) -> Vec<String> {
    lines(r)
        .into_iter()
        .map(|t| {
            let dated = t.len() > 13 && t.starts_with('(') && t.get(11..13) == Some(") ");
            assert!(dated, "a bullet without its date: {t}");
            t[13..].to_string()
        })
        .collect()
}

fn seed(c: &mut Client) {
    for r in [
        json!({"text": "Ana prefers green tea over coffee.", "category": "preferences", "importance": 4, "pinned": true,
               "tags": ["drinks"], "agent_id": "a1", "run_id": "r1", "actor_id": "ana", "role": "user", "thread_id": "t"}),
        json!({"text": "The release is planned for Friday.", "category": "tasks", "importance": 2, "tags": ["release"],
               "agent_id": "a2", "run_id": "r2", "actor_id": "bob", "role": "assistant", "kind": "episodic", "thread_id": "t"}),
        json!({"text": "Ana runs five kilometres every morning.", "category": "habits", "importance": 1,
               "agent_id": "a1", "run_id": "r2", "actor_id": "ana", "role": "user", "kind": "insight"}),
    ] {
        write(c, r);
    }
}

#[test]
fn every_filter_narrows_the_results() {
    let (mut c, _) = tenant_session();
    seed(&mut c);
    let q = |c: &mut Client, f: Value| {
        texts(&query(
            c,
            json!({"query": "Ana tea release morning", "top_k": 10, "filters": f}),
        ))
    };
    assert_eq!(q(&mut c, json!({})).len(), 3);
    for (f, want) in [
        (json!({"agent_id": "a1"}), 2),
        (json!({"run_id": "r2"}), 2),
        (json!({"actor_id": "bob"}), 1),
        (json!({"role": "assistant"}), 1),
        (json!({"kind": "insight"}), 1),
        (json!({"category": "tasks"}), 1),
        (json!({"tags": ["drinks"]}), 1),
        (json!({"pinned": true}), 1),
        (json!({"importance_min": 2}), 2),
        (json!({"importance_max": 1}), 1),
        (json!({"importance_min": 2, "importance_max": 3}), 1),
        (json!({"updated_after": "2000-01-01"}), 3),
        (json!({"updated_before": "2000-01-01"}), 0),
        (json!({"agent_id": "a1", "importance_min": 4}), 1),
    ] {
        assert_eq!(q(&mut c, f.clone()).len(), want, "{f}");
    }
    for bad in [
        json!({"agent": 1}),
        json!({"colour": "red"}),
        json!({"pinned": "yes"}),
        json!({"importance_min": 0}),
    ] {
        assert_eq!(
            query_err(&mut c, json!({"query": "x", "filters": bad})),
            "22023",
            "{bad}"
        );
    }
}

#[test]
fn allowlists_are_enforced_whatever_the_filters() {
    let (mut c, _) = tenant_session();
    seed(&mut c);
    c.execute(
        "SELECT memory_configure($1)",
        &[&Json(
            json!({"categories": [{"name": "preferences"}, {"name": "tasks"}, {"name": "habits"}],
                       "allowlists": {"planner": ["tasks"], "coach": ["habits", "preferences"]}}),
        )],
    )
    .unwrap();
    // No categories: the allowlist; a filter naming another category finds nothing.
    assert_eq!(
        texts(&query(
            &mut c,
            json!({"agent": "planner", "query": "Ana tea release"})
        )),
        vec!["[tasks] The release is planned for Friday."]
    );
    let r = query(
        &mut c,
        json!({"agent": "planner", "query": "tea", "filters": {"category": "preferences"}}),
    );
    assert!(texts(&r).is_empty());
    // Asking for a category outside it, or being an agent without one: 42501.
    assert_eq!(
        query_err(
            &mut c,
            json!({"agent": "planner", "query": "x", "categories": ["preferences"]})
        ),
        "42501"
    );
    assert_eq!(
        query_err(&mut c, json!({"agent": "nobody", "query": "x"})),
        "42501"
    );
    let e = c
        .query_one(
            "SELECT memory_query($1)",
            &[&Json(
                json!({"agent": "planner", "query": "x", "categories": ["tasks", "habits"]}),
            )],
        )
        .unwrap_err();
    assert!(
        e.as_db_error().unwrap().message().contains("habits"),
        "names the disallowed category: {e}"
    );
    assert_eq!(
        texts(&query(
            &mut c,
            json!({"agent": "coach", "query": "Ana", "categories": ["habits"]})
        ))
        .len(),
        1
    );
}

#[test]
fn budget_is_never_exceeded_by_an_independent_count() {
    let (mut c, _) = tenant_session();
    for i in 0..30 {
        write(
            &mut c,
            json!({"text": format!("Fact number {i}: Ana visited city {i} and liked the food there very much."), "thread_id": "b", "kind": "archival"}),
        );
    }
    let bpe = tiktoken_rs::cl100k_base().unwrap();
    for budget in [1, 5, 20, 47, 100, 333, 1000] {
        let r = query(
            &mut c,
            json!({"query": "Ana city food", "thread_id": "b", "since_rev": 0, "top_k": 50, "budget_tokens": budget}),
        );
        let mut n = r["header"]
            .as_str()
            .map_or(0, |h| bpe.encode_ordinary(h).len());
        n += lines(&r)
            .iter()
            .map(|t| bpe.encode_ordinary(t).len())
            .sum::<usize>();
        assert!(n <= budget, "budget {budget}: {n} tokens returned");
        assert_eq!(
            r["used_tokens"].as_u64().unwrap() as usize,
            n,
            "used_tokens is the true count"
        );
        if budget >= 1000 {
            assert!(texts(&r).len() > 20, "a large budget returns many items");
        }
    }
    // Lowest-ranked items go first: a smaller budget returns a prefix of a larger one's items.
    let big = texts(&query(
        &mut c,
        json!({"query": "Ana city food", "top_k": 50, "budget_tokens": 400}),
    ));
    let small = texts(&query(
        &mut c,
        json!({"query": "Ana city food", "top_k": 50, "budget_tokens": 120}),
    ));
    assert!(!small.is_empty() && small.len() < big.len());
    assert_eq!(small[..], big[..small.len()]);
}

#[test]
fn threshold_soft_deletes_and_the_header() {
    let (mut c, t) = tenant_session();
    seed(&mut c);
    let all = texts(&query(&mut c, json!({"query": "green tea", "top_k": 10})));
    let strict = texts(&query(
        &mut c,
        json!({"query": "green tea", "top_k": 10, "threshold": 0.5}),
    ));
    assert_eq!(all.len(), 3);
    assert!(!strict.is_empty() && strict.len() < 3, "{strict:?}");
    // A soft-deleted memory is never returned.
    let mut adm = admin();
    adm.execute(
        "UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + interval '30 days' WHERE user_id = $1 AND text LIKE 'Ana prefers%'",
        &[&t],
    )
    .unwrap();
    assert!(
        !texts(&query(&mut c, json!({"query": "green tea", "top_k": 10})))
            .iter()
            .any(|x| x.contains("green tea"))
    );
    // The header: once after changes, then not again until something changes.
    let r = query(&mut c, json!({"query": "x", "thread_id": "t"}));
    let h = r["header"].as_str().unwrap();
    assert!(
        h.starts_with("Memory updates since rev 0:")
            && h.contains("~soft_deleted: [preferences] Ana prefers green tea"),
        "{h}"
    );
    assert!(h.lines().count() <= 4);
    assert!(query(&mut c, json!({"query": "x", "thread_id": "t"}))["header"].is_null());
    write(
        &mut c,
        json!({"text": "Ana switched to oolong tea.", "thread_id": "t", "category": "preferences"}),
    );
    let h = query(&mut c, json!({"query": "x", "thread_id": "t"}))["header"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        h.contains("+created: [preferences] Ana switched to oolong tea. (imp=2)"),
        "{h}"
    );
    assert!(
        !h.contains("soft_deleted"),
        "only what changed since the last report: {h}"
    );
}

#[test]
fn tenants_never_see_each_other_through_memory_query() {
    let (mut a, ta) = tenant_session();
    let (mut b, tb) = tenant_session();
    write(
        &mut a,
        json!({"text": "Secret of A: the launch code is 1234.", "thread_id": "x"}),
    );
    write(&mut b, json!({"text": "B likes hiking."}));
    let r = query(&mut b, json!({"query": "secret launch code", "top_k": 100}));
    assert!(texts(&r).iter().all(|x| !x.contains("Secret of A")));
    assert_eq!(
        query_err(&mut b, json!({"query": "x", "filters": {"user_id": ta}})),
        "42501"
    );
    // Thread "x" of A is not B's: no header leaks from it.
    assert!(query(
        &mut b,
        json!({"query": "x", "thread_id": "x", "since_rev": 0})
    )["header"]
        .is_null());
    let n: i64 = b
        .query_one(
            "SELECT count(*) FROM memory_search('launch code', top_k => 100)",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1, "only B's own memory");
    let _ = tb;
}

#[test]
fn bulk_path_equals_one_by_one() {
    let reqs: Vec<Value> = vec![
        json!({"text": "Ana prefers green tea over coffee.", "thread_id": "t"}),
        json!({"text": "Ana prefers green tea over coffee.", "thread_id": "t"}),
        json!({"text": "Ana prefers green tea over coffee!", "thread_id": "t"}),
        json!({"text": "The release is planned for Friday.", "thread_id": "t"}),
        json!({"text": "Ana likes tea with lemon.", "thread_id": "t"}),
    ];
    let (mut one, t1) = tenant_session();
    let singles: Vec<Value> = reqs.iter().map(|r| write(&mut one, r.clone())).collect();
    let (mut bulk, t2) = tenant_session();
    let batch: Json<Value> = bulk
        .query_one(
            "SELECT memory_write_batch($1)",
            &[&Json(Value::Array(reqs.clone()))],
        )
        .unwrap()
        .get(0);
    let events = |v: &[Value]| {
        v.iter()
            .map(|r| r["event"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(events(&singles), events(batch.0.as_array().unwrap()));
    assert_eq!(
        events(&singles),
        ["created", "noop", "updated", "created", "created"]
    );
    let mut adm = admin();
    let state = |adm: &mut Client, t: &str| -> Vec<(String, i64)> {
        adm.query(
            "SELECT i.text, (SELECT count(*) FROM memory.relations r WHERE r.user_id = i.user_id AND r.from_id = i.id)
             FROM memory.items i WHERE i.user_id = $1 ORDER BY i.text",
            &[&t],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
    };
    assert_eq!(state(&mut adm, &t1), state(&mut adm, &t2));
    // A bad element fails the whole batch: nothing written.
    let (mut c, t3) = tenant_session();
    let e = c
        .query_one(
            "SELECT memory_write_batch($1)",
            &[&Json(json!([{"text": "fine"}, {"text": ""}]))],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&e), "22023");
    let n: i64 = adm
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1",
            &[&t3],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
}

#[test]
fn concurrent_writers_and_readers() {
    ensure_role(&mut admin(), "me_app");
    let t = unique("conc");
    let handles: Vec<_> = (0..6)
        .map(|k| {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut c = connect_as("me_app");
                c.batch_execute(&format!("SET memory_ext.user_id = '{t}'")).unwrap();
                for i in 0..25 {
                    if k < 4 {
                        let r = write(&mut c, json!({"text": format!("Writer {k} wrote fact {i} about project Orion."), "thread_id": format!("w{k}")}));
                        assert_eq!(r["event"], "created");
                    } else {
                        let r = query(&mut c, json!({"query": "project Orion fact", "top_k": 5}));
                        assert!(r["items"].as_array().unwrap().len() <= 5);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut adm = admin();
    let n: i64 = adm
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1",
            &[&t],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 100);
    // The BM25 statistics agree with a recount after all that concurrency.
    let (docs, off): (i64, i64) = {
        let r = adm
            .query_one(
                "SELECT (SELECT docs FROM memory.corpus WHERE user_id = $1),
                        (SELECT count(*) FROM (
                            SELECT u.lexeme, count(*) AS df FROM memory.items i CROSS JOIN LATERAL unnest(i.tsv) u
                            WHERE i.user_id = $1 AND u.lexeme <> memory.tenant_lexeme($1) GROUP BY 1) a
                         FULL JOIN (SELECT lexeme, df FROM memory.lexicon WHERE user_id = $1) l USING (lexeme)
                         WHERE a.df IS DISTINCT FROM l.df)",
                &[&t],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((docs, off), (100, 0));
}

#[test]
fn plans_use_the_indexes_at_20k_memories() {
    let mut adm = admin();
    let t = unique("plan");
    adm.batch_execute(&format!("SET memory_ext.user_id = '{t}'"))
        .unwrap();
    // 20k memories with supplied 384-d vectors (clustered), in batches. Each names three of a
    // thousand topics, so a topic is in ~60 memories, and every one says "note".
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut unit = move || (rnd() % 2000) as f32 / 1000.0 - 1.0;
    let centres: Vec<Vec<f32>> = (0..20)
        .map(|_| (0..384).map(|_| unit()).collect())
        .collect();
    // The first through the API (which says what model its vector is of), the other 19,999 by
    // one INSERT of the same columns: the test is of the plans at this size, and memory_write's
    // checks on each (duplicates, neighbours) took three minutes of a debug build per run.
    // Noise from a seeded random(), so every run has the same rows.
    adm.execute(
        "SELECT memory_write_batch($1)",
        &[&Json(
            json!([{"text": "Note 0 about topic0, topic104 and topic209.", "kind": "archival",
                        "embedding": centres[0], "tags": []}]),
        )],
    )
    .unwrap();
    let flat: Vec<f32> = centres.iter().flatten().copied().collect();
    adm.batch_execute("SELECT setseed(0.42)").unwrap();
    adm.execute(
        "INSERT INTO memory.items (user_id, kind, text, tags, embedding, embedding_model)
         SELECT $1, 'archival',
                format('Note %s about topic%s, topic%s and topic%s.', n, (n * 7919 + 104729) % 1000,
                       (n * 7919 + 2 * 104729) % 1000, (n * 7919 + 3 * 104729) % 1000),
                CASE WHEN n % 1000 = 7 THEN '{rare}'::text[] ELSE '{}' END,
                (SELECT array_agg(($2::real[])[(n % 20) * 384 + d] + 0.3 * (random() * 2 - 1) ORDER BY d)
                 FROM generate_series(1, 384) d)::vector,
                (SELECT embedding_model FROM memory.items WHERE user_id = $1 LIMIT 1)
         FROM generate_series(1, 19999) n",
        &[&t, &flat],
    )
    .unwrap();
    adm.batch_execute("ANALYZE memory.items").unwrap();
    let plan = |adm: &mut Client, q: &str| -> String {
        adm.query_one(
            "SELECT memory.query_plan($1)",
            &[&Json(
                json!({"query": q, "embedding": centres[3], "filters": {"importance_min": 1}}),
            )],
        )
        .unwrap()
        .get(0)
    };
    // Rare terms: both sides use their index.
    let p = plan(&mut adm, "topic17 and topic42");
    assert!(
        p.contains("Index Scan using items_emb_"),
        "HNSW index for the vector side:\n{p}"
    );
    assert!(
        p.contains("items_tsv_idx"),
        "GIN index for the lexical side:\n{p}"
    );
    assert!(!p.contains("Seq Scan on items"), "no sequential scan:\n{p}");
    assert!(
        !p.contains("items_updated_idx"),
        "no walk over the tenant's rows:\n{p}"
    );
    // The same as an application's ordinary role, under row-level security, where `@@` (not
    // leakproof) may not run before the policies and so was no index condition: the keyword
    // side read all 20k memories through them. Its candidates are read through the GIN index
    // as the owner, then through the policies (sql/queries/search_memories_lexical.sql), and
    // the answer is the superuser's.
    ensure_role(&mut adm, "me_app");
    let mut app = connect_as("me_app");
    app.batch_execute(&format!("SET memory_ext.user_id = '{t}'"))
        .unwrap();
    let p = plan(&mut app, "topic17 and topic42");
    assert!(
        p.contains("-- keyword candidates") && p.contains("items_tsv_idx"),
        "GIN index for an ordinary role's lexical side:\n{p}"
    );
    assert!(
        !p.contains("items_updated_idx") && !p.contains("Seq Scan on items"),
        "no walk over the tenant's rows under row-level security:\n{p}"
    );
    let seeds = p
        .split("-- seeds")
        .nth(1)
        .and_then(|s| s.split("-- pool").next())
        .unwrap_or_default();
    assert!(
        seeds.contains("items_pkey"),
        "the candidates read again by primary key:\n{p}"
    );
    let ids = |c: &mut Client| -> Vec<Value> {
        query(
            c,
            json!({"query": "topic17 and topic42", "embedding": centres[3], "top_k": 10, "return": "full"}),
        )["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].clone())
            .collect()
    };
    assert_eq!(
        ids(&mut app),
        ids(&mut adm),
        "the same answer as the superuser's"
    );
    // The pool statement's generic plan fetches memories by primary key, in the tenant's
    // partition only (picked when the plan starts), and episode edges through their index.
    let pool = p.split("-- pool").nth(1).unwrap_or_default();
    assert!(
        pool.contains("items_pkey") && pool.contains("Subplans Removed: 15"),
        "pool by primary key, one partition:\n{p}"
    );
    assert!(
        !pool.contains("Seq Scan"),
        "no sequential scan in the pool:\n{p}"
    );
    // A term in every memory: no lexical scan at all, rather than a walk over all 20k rows.
    let p = plan(&mut adm, "note");
    assert!(p.contains("Index Scan using items_emb_"), "HNSW:\n{p}");
    assert!(!p.contains("Seq Scan on items"), "no sequential scan:\n{p}");
    assert!(
        !p.contains("items_updated_idx") && !p.contains("items_tsv_idx"),
        "no lexical scan for a term in every memory:\n{p}"
    );
    // And the query still answers, by vector, with the BM25 of what it finds.
    let r = query(
        &mut adm,
        json!({"query": "note", "embedding": centres[3], "top_k": 5}),
    );
    assert_eq!(r["items"].as_array().map(Vec::len), Some(5), "{r}");
    // A rare tag (20 of 20k memories): both sides go through the tag index, not an HNSW walk
    // past the tenant's other rows (archival_search's `tags`, memory_query's `filters.tags`).
    let p: String = adm
        .query_one(
            "SELECT memory.query_plan($1)",
            &[&Json(
                json!({"query": "note", "embedding": centres[3], "filters": {"tags": ["rare"]}}),
            )],
        )
        .unwrap()
        .get(0);
    let seeds = p.split("-- pool").next().unwrap_or_default();
    assert!(seeds.contains("items_tags_idx"), "tag index:\n{p}");
    assert!(
        !seeds.contains("Index Scan using items_emb_"),
        "no HNSW walk:\n{p}"
    );
    assert!(!p.contains("Seq Scan on items"), "no sequential scan:\n{p}");
    let r = query(
        &mut adm,
        json!({"query": "note", "embedding": centres[3], "top_k": 30, "return": "full",
               "filters": {"tags": ["rare"]}}),
    );
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 20, "every tagged memory, and only those: {r}");
    assert!(items.iter().all(|i| i["tags"] == json!(["rare"])), "{r}");
}
