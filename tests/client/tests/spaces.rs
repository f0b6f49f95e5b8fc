//! Spaces through a driver (docs/api.md "Spaces"): a member loses a space at its next statement
//! when the admin revokes it from another session, inside the member's open transaction; two
//! members writing into one space at once, eight sessions each, lose nothing and each is named
//! in its history; another tenant sees none of it.

use memory_ext_client_tests::{admin, call, connect_as, ensure_role, sqlstate, unique};
use postgres::Client;
use serde_json::json;
use std::thread;

const ROLE: &str = "me_app";

fn session(tenant: &str) -> Client {
    let mut c = connect_as(ROLE);
    c.batch_execute(&format!("SET memory_ext.user_id = '{tenant}'"))
        .unwrap();
    c
}

fn seen(c: &mut Client, key: &str) -> i64 {
    c.query_one(
        "SELECT count(*) FROM memory.items WHERE user_id = $1",
        &[&key],
    )
    .unwrap()
    .get(0)
}

#[test]
fn a_revoke_counts_from_the_members_next_statement() {
    ensure_role(&mut admin(), ROLE);
    let (owner, member, space) = (unique("sp-admin"), unique("sp-member"), unique("sp"));
    let key = format!("space:{space}");
    let mut a = session(&owner);
    a.query_one("SELECT memory_space_create($1)", &[&space])
        .unwrap();
    a.query_one(
        "SELECT memory_write(jsonb_build_object('text', 'Refunds over 500 euros need approval.', 'space', $1::text))",
        &[&space],
    )
    .unwrap();
    a.query_one("SELECT memory_grant($1, $2)", &[&space, &member])
        .unwrap();

    let mut m = session(&member);
    let mut tx = m.transaction().unwrap();
    let n: i64 = tx
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1",
            &[&key],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1, "the member reads the space before the revoke");
    // The admin revokes from its own session and commits while the member's transaction is open.
    a.query_one("SELECT memory_revoke($1, $2)", &[&space, &member])
        .unwrap();
    let n: i64 = tx
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1",
            &[&key],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "the revoke counts from the member's next statement");
    let e = tx
        .query_one(
            "SELECT memory_write(jsonb_build_object('text', 'x', 'space', $1::text))",
            &[&space],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");
}

#[test]
fn two_members_write_into_one_space_at_once() {
    ensure_role(&mut admin(), ROLE);
    let (owner, space) = (unique("sp-admin"), unique("sp"));
    let members = [unique("sp-ana"), unique("sp-ben")];
    let key = format!("space:{space}");
    let mut a = session(&owner);
    a.query_one("SELECT memory_space_create($1)", &[&space])
        .unwrap();
    for m in &members {
        a.query_one("SELECT memory_grant($1, $2, 'write')", &[&space, m])
            .unwrap();
    }
    const SESSIONS: usize = 8;
    const WRITES: usize = 5;
    let workers: Vec<_> = (0..SESSIONS)
        .map(|s| {
            let (member, space) = (members[s % 2].clone(), space.clone());
            thread::spawn(move || {
                let mut c = session(&member);
                for w in 0..WRITES {
                    c.query_one(
                        "SELECT memory_write(jsonb_build_object('text', $1::text, 'space', $2::text))",
                        &[&format!("Shared note {s}-{w} from {member} about refund case {}.", s * 100 + w), &space],
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(seen(&mut a, &key), (SESSIONS * WRITES) as i64);
    // Each member is named in the history of what it wrote (the admin reads it: history rows of
    // the space are readable to its members).
    for m in &members {
        let n: i64 = a
            .query_one(
                "SELECT count(*) FROM memory.history WHERE user_id = $1 AND entity = 'item' AND event = 'ADD'
                 AND actor LIKE '%[member: ' || $2 || ']'",
                &[&key, m],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, (SESSIONS / 2 * WRITES) as i64, "history names {m}");
    }
    // A member reads them all in one ranking, labelled; a stranger sees nothing.
    let mut ana = session(&members[0]);
    let r = call(
        &mut ana,
        "memory_query",
        json!({"query": "refund case shared note", "top_k": 10}),
    );
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 10);
    assert!(items.iter().all(|i| i["space"] == json!(space)), "{r}");
    let mut stranger = session(&unique("sp-stranger"));
    assert_eq!(seen(&mut stranger, &key), 0);
    let r = call(
        &mut stranger,
        "memory_query",
        json!({"query": "refund case"}),
    );
    assert_eq!(r["items"], json!([]));
}

#[test]
fn two_members_edit_one_shared_block_at_once() {
    ensure_role(&mut admin(), ROLE);
    let (owner, space) = (unique("sp-admin"), unique("sp"));
    let members = [unique("sp-cid"), unique("sp-dee")];
    let mut a = session(&owner);
    a.query_one("SELECT memory_space_create($1)", &[&space])
        .unwrap();
    let team = unique("team-agent");
    a.query_one("SELECT memory_agent($1, 'space:' || $2)", &[&team, &space])
        .unwrap();
    a.query_one("SELECT block_set($1, 'log', 'Shared log.')", &[&team])
        .unwrap();
    let block: String = a
        .query_one(
            "SELECT id::text FROM memory.blocks WHERE user_id = 'space:' || $1 AND label = 'log'",
            &[&space],
        )
        .unwrap()
        .get(0);
    for m in &members {
        a.query_one("SELECT memory_grant($1, $2, 'write')", &[&space, m])
            .unwrap();
    }
    // Each member's own agent gets the block; then both append through them at once.
    const EDITS: usize = 20;
    let workers: Vec<_> = members
        .iter()
        .map(|m| {
            let (m, block) = (m.clone(), block.clone());
            thread::spawn(move || {
                let mut c = session(&m);
                let agent = format!("{m}-bot");
                c.query_one("SELECT memory_agent($1, NULL)", &[&agent])
                    .unwrap();
                c.query_one("SELECT block_attach($1, $2::text::uuid)", &[&agent, &block])
                    .unwrap();
                for e in 0..EDITS {
                    c.query_one(
                        "SELECT block_append($1, 'log', $2)",
                        &[&agent, &format!("{m} line {e}")],
                    )
                    .unwrap();
                }
                agent
            })
        })
        .collect();
    let agents: Vec<String> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    // One block, every line once, one version per edit, one history row per edit.
    let (value, version): (String, i32) = {
        let r = a
            .query_one(
                "SELECT value, version FROM memory.blocks WHERE user_id = 'space:' || $1 AND label = 'log'",
                &[&space],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    for m in &members {
        for e in 0..EDITS {
            let line = format!("{m} line {e}");
            assert_eq!(value.lines().filter(|l| *l == line).count(), 1, "{line}");
        }
    }
    assert_eq!(version as usize, 1 + 2 * EDITS);
    let history: i64 = a
        .query_one(
            "SELECT count(*) FROM memory.history WHERE user_id = 'space:' || $1 AND entity = 'block' AND event = 'UPDATE'",
            &[&space],
        )
        .unwrap()
        .get(0);
    assert_eq!(history as usize, 2 * EDITS);
    // Both agents' prompts show the same block as it is now.
    for (m, agent) in members.iter().zip(&agents) {
        let mut c = session(m);
        let text: String = c
            .query_one("SELECT compile_blocks($1) ->> 'text'", &[agent])
            .unwrap()
            .get(0);
        assert!(text.contains(&value), "{agent} sees the shared block");
    }
}
