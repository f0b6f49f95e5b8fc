//! Revisions under concurrency: 8 clients write to one thread at once, through our functions
//! and through plain SQL; revisions must come out 1..N with no gaps and no duplicates, with
//! exactly one change_log row per revision.

use memory_ext_client_tests::{admin, unique};
use postgres::Client;
use std::thread;

/// The single bigint column of a query's rows, in order.
fn column(db: &mut Client, sql: &str, tenant: &str, thread_id: &str) -> Vec<i64> {
    db.query(sql, &[&tenant, &thread_id])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

const CLIENTS: usize = 8;
const WRITES_PER_CLIENT: usize = 40;

#[test]
fn eight_concurrent_writers_give_gapless_revisions() {
    let tenant = unique("tenant");
    let thread_id = unique("thread");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(CLIENTS));
    let handles: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (tenant, thread_id, barrier) = (tenant.clone(), thread_id.clone(), barrier.clone());
            thread::spawn(move || {
                let mut db = admin();
                db.batch_execute(&format!("SET memory_ext.user_id = '{tenant}'")).unwrap();
                barrier.wait();
                for i in 0..WRITES_PER_CLIENT {
                    match i % 4 {
                        0 => {
                            db.execute("SELECT message_append($1, 'user', $2)", &[&thread_id, &format!("client {c} msg {i}")])
                                .unwrap();
                        }
                        1 => {
                            db.execute(
                                "INSERT INTO memory.items (user_id, text, thread_id) VALUES ($1, $2, $3)",
                                &[&tenant, &format!("fact {c}-{i}"), &thread_id],
                            )
                            .unwrap();
                        }
                        2 => {
                            db.execute(
                                "UPDATE memory.items SET text = text || ' (edited)'
                                 WHERE user_id = $1 AND text = $2",
                                &[&tenant, &format!("fact {c}-{}", i - 1)],
                            )
                            .unwrap();
                        }
                        _ => {
                            // A transaction that writes and then rolls back must leave no gap.
                            let mut tx = db.transaction().unwrap();
                            tx.execute("SELECT message_append($1, 'user', 'rolled back')", &[&thread_id])
                                .unwrap();
                            tx.rollback().unwrap();
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("writer thread panicked");
    }

    let mut db = admin();
    let expected = (CLIENTS * WRITES_PER_CLIENT * 3 / 4) as i64;
    let revision: i64 = db
        .query_one(
            "SELECT revision FROM memory.threads WHERE user_id = $1 AND thread_id = $2",
            &[&tenant, &thread_id],
        )
        .unwrap()
        .get(0);
    assert_eq!(revision, expected, "one revision per committed change");
    let revs = column(
        &mut db,
        "SELECT rev FROM memory.change_log WHERE user_id = $1 AND thread_id = $2 ORDER BY rev",
        &tenant,
        &thread_id,
    );
    assert_eq!(
        revs,
        (1..=expected).collect::<Vec<_>>(),
        "change_log revisions are 1..N exactly"
    );
    // Messages are numbered 1..M without gaps as well.
    let seqs = column(
        &mut db,
        "SELECT seq FROM memory.messages WHERE user_id = $1 AND thread_id = $2 ORDER BY seq",
        &tenant,
        &thread_id,
    );
    assert_eq!(
        seqs,
        (1..=(CLIENTS * WRITES_PER_CLIENT / 4) as i64).collect::<Vec<_>>()
    );
    // Every item change is in the history: one ADD and one UPDATE per item.
    let (adds, updates): (i64, i64) = {
        let r = db
            .query_one(
                "SELECT count(*) FILTER (WHERE event = 'ADD'), count(*) FILTER (WHERE event = 'UPDATE')
                 FROM memory.history WHERE user_id = $1 AND entity = 'item'",
                &[&tenant],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!(
        (adds, updates),
        (
            (CLIENTS * WRITES_PER_CLIENT / 4) as i64,
            (CLIENTS * WRITES_PER_CLIENT / 4) as i64
        )
    );
}
