//! Row-level security with real, non-superuser roles (docs/api.md "Identity and tenancy"): tenant A
//! can neither read, change nor infer tenant B's rows, through tables or functions, and naming
//! another tenant is 42501.

use memory_ext_client_tests::{admin, connect_as, ensure_role, sqlstate, unique};

const TABLES: [&str; 13] = [
    "agents",
    "blocks",
    "threads",
    "messages",
    "items",
    "relations",
    "change_log",
    "history",
    "events",
    "categories",
    "allowlists",
    "checkpoints",
    "settings",
];

/// Tenant B's data, written by B itself through the API and plain SQL.
fn seed_tenant(role: &str, tenant: &str, agent: &str, thread: &str) {
    let mut b = connect_as(role);
    b.batch_execute(&format!("SET memory_ext.user_id = '{tenant}'"))
        .unwrap();
    b.execute(
        "SELECT memory_agent($1, $2, 'persona of b', 'human of b')",
        &[&agent, &tenant],
    )
    .unwrap();
    b.execute(
        "SELECT message_append($1, 'user', 'secret message of b')",
        &[&thread],
    )
    .unwrap();
    b.execute(
        "INSERT INTO memory.items (user_id, text, thread_id) VALUES ($1, 'secret memory of b', $2)",
        &[&tenant, &thread],
    )
    .unwrap();
    b.execute(
        "INSERT INTO memory.checkpoints (user_id, thread_id, checkpoint_data) VALUES ($1, $2, '{}')",
        &[&tenant, &thread],
    )
    .unwrap();
    b.execute("SELECT memory_configure('{\"language\": \"de\"}')", &[])
        .unwrap();
}

#[test]
fn tenant_setting_isolates_tables_and_functions() {
    let mut adm = admin();
    ensure_role(&mut adm, "me_app");
    let (ta, tb) = (unique("tenant-a"), unique("tenant-b"));
    let (agent_b, thread_b) = (unique("agent-b"), unique("thread-b"));
    seed_tenant("me_app", &tb, &agent_b, &thread_b);

    let mut a = connect_as("me_app");
    a.batch_execute(&format!("SET memory_ext.user_id = '{ta}'"))
        .unwrap();

    // Read: nothing of B's in any table.
    for t in TABLES {
        let n: i64 = a
            .query_one(
                &format!("SELECT count(*) FROM memory.{t} WHERE user_id = $1"),
                &[&tb],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, 0, "tenant A sees B's rows in memory.{t}");
    }
    // Change: updates and deletes of B's rows touch nothing.
    for t in ["blocks", "messages", "items", "agents", "checkpoints"] {
        let n = a
            .execute(
                &format!("DELETE FROM memory.{t} WHERE user_id = $1"),
                &[&tb],
            )
            .unwrap();
        assert_eq!(n, 0, "tenant A deleted B's rows in memory.{t}");
    }
    assert_eq!(
        a.execute(
            "UPDATE memory.items SET text = 'pwned' WHERE user_id = $1",
            &[&tb]
        )
        .unwrap(),
        0
    );
    // Writing rows for B is refused by the policy.
    let e = a
        .execute(
            "INSERT INTO memory.items (user_id, text) VALUES ($1, 'forged')",
            &[&tb],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");

    // Functions: B's agent and thread look exactly like ones that do not exist (no inference)...
    let e_b = a
        .execute("SELECT compile_core_blocks($1)", &[&agent_b])
        .unwrap_err();
    let e_none = a
        .execute("SELECT compile_core_blocks('no-such-agent')", &[])
        .unwrap_err();
    assert_eq!(sqlstate(&e_b), "P0002");
    assert_eq!(sqlstate(&e_none), "P0002");
    let e = a
        .execute("SELECT block_append($1, 'human', 'x')", &[&agent_b])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "P0002");
    let e = a
        .execute("SELECT context_usage($1, 1000)", &[&thread_b])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "P0002");
    // ...and appending to "B's thread id" creates A's own thread of that name.
    a.execute("SELECT message_append($1, 'user', 'mine')", &[&thread_b])
        .unwrap();
    let owners: Vec<String> = admin()
        .query(
            "SELECT user_id FROM memory.threads WHERE thread_id = $1 ORDER BY user_id",
            &[&thread_b],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(owners.len(), 2);

    // Naming another tenant is 42501, in every function that takes a user_id.
    let e = a
        .execute("SELECT memory_agent('x', $1)", &[&tb])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");
    let e = a
        .execute("SELECT message_append('x', 'user', 'x', $1)", &[&tb])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");

    // B's data is intact.
    let mut adm = admin();
    let v: String = adm
        .query_one(
            "SELECT value FROM memory.blocks WHERE user_id = $1 AND label = 'human'",
            &[&tb],
        )
        .unwrap()
        .get(0);
    assert_eq!(v, "human of b");
    let n: i64 = adm
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1",
            &[&tb],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

#[test]
fn no_tenant_means_no_rows() {
    let mut adm = admin();
    ensure_role(&mut adm, "me_app");
    let tb = unique("tenant-b");
    seed_tenant("me_app", &tb, &unique("agent"), &unique("thread"));
    let mut a = connect_as("me_app");
    let n: i64 = a
        .query_one("SELECT count(*) FROM memory.items", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
    let e = a
        .execute("SELECT memory_agent('x', NULL)", &[])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "22004");
}

#[test]
fn audit_trail_and_revisions_are_not_writable_by_tenants() {
    let mut adm = admin();
    ensure_role(&mut adm, "me_app");
    let t = unique("tenant");
    let thread = unique("thread");
    let mut a = connect_as("me_app");
    a.batch_execute(&format!("SET memory_ext.user_id = '{t}'"))
        .unwrap();
    a.execute("SELECT message_append($1, 'user', 'hi')", &[&thread])
        .unwrap();
    for sql in [
        "UPDATE memory.history SET event = 'ADD'",
        "DELETE FROM memory.change_log",
        "UPDATE memory.threads SET revision = 0",
        "INSERT INTO memory.history (user_id, entity, memory_id, event) VALUES (current_setting('memory_ext.user_id'), 'item', 'x', 'ADD')",
        // The partitions of memory.items are reachable only through it (and its RLS).
        "SELECT count(*) FROM memory.items_p00",
        "SELECT count(*) FROM memory.items_p15",
    ] {
        let e = a.execute(sql, &[]).unwrap_err();
        assert_eq!(sqlstate(&e), "42501", "{sql}");
    }
    // Its own thread's metadata is its to change.
    a.execute(
        "UPDATE memory.threads SET metadata = '{\"title\": \"x\"}' WHERE thread_id = $1",
        &[&thread],
    )
    .unwrap();
}

#[test]
fn tenant_source_role_uses_the_role_name_and_cannot_be_switched() {
    let mut adm = admin();
    for r in ["me_tenant_r1", "me_tenant_r2"] {
        ensure_role(&mut adm, r);
        adm.batch_execute(&format!(
            "ALTER ROLE {r} SET memory_ext.tenant_source = 'role'"
        ))
        .unwrap();
    }
    let mut r1 = connect_as("me_tenant_r1");
    let me: String = r1
        .query_one("SELECT memory.current_tenant()", &[])
        .unwrap()
        .get(0);
    assert_eq!(me, "me_tenant_r1");
    let agent = unique("agent");
    r1.execute("SELECT memory_agent($1, NULL, 'p', 'h')", &[&agent])
        .unwrap();
    // memory_ext.user_id is ignored in role mode, and the mode is superuser-only.
    r1.batch_execute("SET memory_ext.user_id = 'me_tenant_r2'")
        .unwrap();
    let me: String = r1
        .query_one("SELECT memory.current_tenant()", &[])
        .unwrap()
        .get(0);
    assert_eq!(me, "me_tenant_r1");
    let e = r1
        .batch_execute("SET memory_ext.tenant_source = 'setting'")
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");

    let mut r2 = connect_as("me_tenant_r2");
    let e = r2
        .execute("SELECT compile_core_blocks($1)", &[&agent])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "P0002");
    let e = r2
        .execute("SELECT memory_agent('x', 'me_tenant_r1')", &[])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");
}
