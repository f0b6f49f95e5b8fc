//! Helpers for the client integration tests: connections to the server `make test` starts.
//!
//! `MEMORY_EXT_TEST_DSN` names a database where `memory_ext` is installed and the connecting
//! role is a superuser (it creates the test roles). The tests refuse to run without it rather
//! than pass vacuously.

use postgres::types::Json;
use postgres::{Client, NoTls};
use serde_json::Value;

pub fn dsn() -> String {
    std::env::var("MEMORY_EXT_TEST_DSN").expect(
        "MEMORY_EXT_TEST_DSN is not set: run these through `make test`, which starts a server",
    )
}

/// A superuser connection.
pub fn admin() -> Client {
    Client::connect(&dsn(), NoTls).expect("connect as admin")
}

/// A connection as `role` (the test server trusts 127.0.0.1).
pub fn connect_as(role: &str) -> Client {
    Client::connect(&format!("{} user={role}", dsn()), NoTls).expect("connect as role")
}

/// A login role without superuser or BYPASSRLS, created once per cluster.
pub fn ensure_role(admin: &mut Client, role: &str) {
    let db = current_db(admin);
    admin
        .batch_execute(&format!(
            "DO $$ BEGIN
               -- Tests run in parallel; roles are cluster-wide: create each once.
               PERFORM pg_advisory_xact_lock(hashtext('memory_ext_test_roles'));
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN
                 CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS;
               END IF;
             END $$;
             GRANT CONNECT ON DATABASE {db} TO {role};"
        ))
        .expect("create role");
}

fn current_db(c: &mut Client) -> String {
    c.query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0)
}

/// A connection as the ordinary role `role` (created once) acting for a fresh tenant named after
/// `prefix`: what an application's session looks like.
pub fn tenant_session(role: &str, prefix: &str) -> (Client, String) {
    ensure_role(&mut admin(), role);
    let t = unique(prefix);
    let mut c = connect_as(role);
    c.batch_execute(&format!("SET memory_ext.user_id = '{t}'"))
        .unwrap();
    (c, t)
}

/// `SELECT function($1)` with a JSON request: the JSON it returns.
pub fn call(c: &mut Client, function: &str, req: Value) -> Value {
    let r: Json<Value> = c
        .query_one(&format!("SELECT {function}($1)"), &[&Json(req)])
        .unwrap()
        .get(0);
    r.0
}

/// A name unique to this test run, so tests can share one database.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The SQLSTATE of a failed statement.
pub fn sqlstate(e: &postgres::Error) -> String {
    e.code()
        .map(|c| c.code().to_string())
        .unwrap_or_else(|| format!("no sqlstate: {e}"))
}
