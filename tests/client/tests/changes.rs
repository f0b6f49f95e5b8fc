//! The change feed through a driver (docs/api.md "Change feed"): sixteen sessions writing at
//! once, in transactions that commit out of the order they began, and a reader following
//! memory_changes with its cursor the whole time, which must end with every change once; and a
//! LISTEN client, which must hear each of its tenant's commits and nothing it could read of
//! another's.

use memory_ext_client_tests::{call, connect_as, sqlstate, tenant_session};
use postgres::fallible_iterator::FallibleIterator;
use postgres::Client;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const WRITERS: usize = 16;
const TRANSACTIONS: usize = 8;

fn changes(c: &mut Client, since: Option<&str>) -> Value {
    c.query_one("SELECT memory_changes($1, 1000)", &[&since])
        .unwrap()
        .get::<_, postgres::types::Json<Value>>(0)
        .0
}

/// Reads the feed from `cursor` to its end: every change, in order, and the cursor after it.
fn drain(c: &mut Client, cursor: &mut Option<String>, seen: &mut Vec<Value>) {
    loop {
        let r = changes(c, cursor.as_deref());
        let batch = r["changes"].as_array().unwrap().clone();
        *cursor = Some(r["cursor"].as_str().unwrap().to_string());
        let n = batch.len();
        seen.extend(batch);
        if n < 1000 {
            return;
        }
    }
}

#[test]
fn sixteen_writers_lose_and_repeat_nothing() {
    let (mut reader, tenant) = tenant_session("me_app", "feed-many");
    let done = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let tenant = tenant.clone();
            thread::spawn(move || {
                let mut c = connect_as("me_app");
                c.batch_execute(&format!("SET memory_ext.user_id = '{tenant}'"))
                    .unwrap();
                let mut ids = vec![];
                for t in 0..TRANSACTIONS {
                    // Two memories per transaction, a pause between them that differs from
                    // writer to writer: transactions commit in another order than the one in
                    // which they took their ids.
                    let mut tx = c.transaction().unwrap();
                    for k in 0..2 {
                        // Half the writers write memories, which one tenant's writes take in
                        // turn (its term statistics are one row); the other half append to
                        // threads of their own, which nothing makes wait for each other.
                        let r: postgres::types::Json<Value> = if w % 2 == 0 {
                            tx.query_one(
                                "SELECT memory_write($1)",
                                &[&postgres::types::Json(
                                    json!({"text": format!("writer {w} wrote note {t}.{k}")}),
                                )],
                            )
                        } else {
                            tx.query_one(
                                "SELECT message_append($1, 'user', $2)",
                                &[&format!("thread-{w}"), &format!("writer {w} says {t}.{k}")],
                            )
                        }
                        .unwrap()
                        .get(0);
                        ids.push(r.0["id"].as_str().unwrap().to_string());
                        let pause = ((w * 7 + t * 3 + k) % 5) as f64 * 0.01;
                        tx.execute("SELECT pg_sleep($1)", &[&pause]).unwrap();
                    }
                    tx.commit().unwrap();
                }
                ids
            })
        })
        .collect();
    // The reader follows the feed while they write.
    let follower = {
        let done = done.clone();
        thread::spawn(move || {
            let mut cursor = None;
            let mut seen = vec![];
            while !done.load(Ordering::SeqCst) {
                drain(&mut reader, &mut cursor, &mut seen);
                thread::sleep(Duration::from_millis(5));
            }
            // The last commits: until every writer's memory has been seen, or a deadline.
            let deadline = Instant::now() + Duration::from_secs(30);
            let inserts = |seen: &Vec<Value>| seen.iter().filter(|c| c["op"] == "insert").count();
            while inserts(&seen) < WRITERS * TRANSACTIONS * 2 && Instant::now() < deadline {
                drain(&mut reader, &mut cursor, &mut seen);
                thread::sleep(Duration::from_millis(20));
            }
            drain(&mut reader, &mut cursor, &mut seen);
            seen
        })
    };
    let written: Vec<String> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    done.store(true, Ordering::SeqCst);
    let seen = follower.join().unwrap();

    // Each memory's changes, in feed order: its insert once, then what else happened to it
    // (a related memory linked to it is an update), revisions 1, 2, ... without a gap.
    let mut by_id: HashMap<String, Vec<(String, i64)>> = HashMap::new();
    for c in &seen {
        assert!(c["entity"] == "memory" || c["entity"] == "message", "{c}");
        by_id
            .entry(c["id"].as_str().unwrap().to_string())
            .or_default()
            .push((
                c["op"].as_str().unwrap().to_string(),
                c["revision"].as_i64().unwrap(),
            ));
    }
    let missing: Vec<_> = written
        .iter()
        .filter(|id| !by_id.contains_key(*id))
        .collect();
    assert!(missing.is_empty(), "changes never read: {missing:?}");
    assert_eq!(by_id.len(), written.len());
    for (id, ops) in &by_id {
        assert_eq!(ops[0].0, "insert", "{id}: {ops:?}");
        assert_eq!(
            ops.iter().filter(|(op, _)| op == "insert").count(),
            1,
            "{id}: {ops:?}"
        );
        let revisions: Vec<i64> = ops.iter().map(|(_, r)| *r).collect();
        assert_eq!(
            revisions,
            (1..=ops.len() as i64).collect::<Vec<_>>(),
            "{id}: {ops:?}"
        );
    }

    // The same as the history (one change per event of the tenant's memories) and the
    // messages (one per message).
    let mut c = connect_as("me_app");
    c.batch_execute(&format!("SET memory_ext.user_id = '{tenant}'"))
        .unwrap();
    let events: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.history WHERE entity = 'item'",
            &[],
        )
        .unwrap()
        .get(0);
    let messages: i64 = c
        .query_one("SELECT count(*) FROM memory.messages", &[])
        .unwrap()
        .get(0);
    assert_eq!((events + messages) as usize, seen.len());
}

/// The notifications of `c` within `wait`.
fn heard(c: &mut Client, wait: Duration) -> Vec<postgres::Notification> {
    c.notifications()
        .timeout_iter(wait)
        .collect::<Vec<_>>()
        .unwrap()
}

#[test]
fn a_listener_hears_each_commit_of_its_tenant_and_nothing_of_others() {
    let (mut listener, _tenant) = tenant_session("me_app", "feed-listen");
    let (mut writer, tenant) = {
        let mut c = connect_as("me_app");
        c.batch_execute(&format!("SET memory_ext.user_id = '{_tenant}'"))
            .unwrap();
        (c, _tenant.clone())
    };
    let (mut stranger, _) = tenant_session("me_app", "feed-stranger");
    let own = changes(&mut listener, None);
    assert_eq!(own["channel"], "memory_ext_changes");
    let tag = own["tags"][0].as_str().unwrap().to_string();
    listener.batch_execute("LISTEN memory_ext_changes").unwrap();
    heard(&mut listener, Duration::from_millis(200));

    // Three commits of the tenant (one of three memories, which is one notification), one
    // rolled back, two of another tenant.
    let mut stranger_ids = HashSet::new();
    for i in 0..3 {
        let mut tx = writer.transaction().unwrap();
        for k in 0..=(i % 2) * 2 {
            tx.query_one(
                "SELECT memory_write($1)",
                &[&postgres::types::Json(
                    json!({"text": format!("the listener's tenant, note {i}.{k}")}),
                )],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    {
        let mut tx = writer.transaction().unwrap();
        tx.query_one(
            "SELECT memory_write($1)",
            &[&postgres::types::Json(json!({"text": "never committed"}))],
        )
        .unwrap();
        tx.rollback().unwrap();
    }
    for i in 0..2 {
        let r = call(
            &mut stranger,
            "memory_write",
            json!({"text": format!("a secret of another tenant {i}")}),
        );
        stranger_ids.insert(r["id"].as_str().unwrap().to_string());
    }

    let got = heard(&mut listener, Duration::from_secs(2));
    let mut own_xids = vec![];
    for n in &got {
        assert_eq!(n.channel(), "memory_ext_changes");
        let payload: Value = serde_json::from_str(n.payload()).unwrap();
        let keys: Vec<&String> = payload.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["owner", "xid"], "payload {payload}");
        for id in &stranger_ids {
            assert!(!n.payload().contains(id.as_str()), "{}", n.payload());
        }
        assert!(!n.payload().contains("secret") && !n.payload().contains(&tenant));
        if payload["owner"] == tag.as_str() {
            own_xids.push(payload["xid"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(
        own_xids.len(),
        3,
        "one notification per committed transaction: {got:?}"
    );
    assert_eq!(own_xids.iter().collect::<HashSet<_>>().len(), 3);
    // The other tenant's commits are heard on the shared channel, under a tag the listener
    // cannot tie to a tenant (other tests write at the same time: at least those two), and
    // memory_changes shows it none of them.
    assert!(got.len() >= 5, "{got:?}");
    let r = changes(&mut listener, None);
    let ids: HashSet<&str> = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 5);
    assert!(ids.is_disjoint(&stranger_ids.iter().map(|s| s.as_str()).collect()));
}

#[test]
fn hostile_cursors_and_limits_are_refused() {
    let (mut c, _) = tenant_session("me_app", "feed-hostile");
    let long = "a".repeat(100_000);
    for bad in [
        "",
        "x",
        "'; DROP TABLE memory.changes; --",
        "00000000.1",
        "00000000.18446744073709551616.1",
        "00000000.1.9223372036854775808",
        "ＡＢ.1.1",
        long.as_str(),
    ] {
        match c.query_one("SELECT memory_changes($1)", &[&bad]) {
            Err(e) => assert_eq!(sqlstate(&e), "22023", "{bad:?}: {e}"),
            Ok(_) => panic!("cursor {bad:?} accepted"),
        }
    }
    for limit in [0, -1, 1001, i32::MAX, i32::MIN] {
        let e = c
            .query_one("SELECT memory_changes(NULL, $1)", &[&limit])
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22023", "limit {limit}: {e}");
    }
}
