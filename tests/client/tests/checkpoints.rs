//! checkpoint_save / checkpoint_load through the Rust driver as a real non-superuser role: a
//! 10 MB state survives the round trip unchanged, concurrent saves to one thread leave one row
//! holding one of the states whole, and another tenant's role sees nothing.

use memory_ext_client_tests::{connect_as, ensure_role, sqlstate, unique};
use postgres::types::Json;
use serde_json::{json, Value};

fn role() -> &'static str {
    let mut a = memory_ext_client_tests::admin();
    ensure_role(&mut a, "memory_cp_role");
    "memory_cp_role"
}

#[test]
fn a_ten_megabyte_state_round_trips_and_is_replaced() {
    let mut c = connect_as(role());
    let user = unique("cp");
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    let big = json!({
        "step": 7,
        "messages": (0..280_000).map(|i| format!("message {i} of a long conversation")).collect::<Vec<_>>(),
    });
    assert!(serde_json::to_string(&big).unwrap().len() > 10_000_000);
    c.execute("SELECT checkpoint_save(NULL, 'run-1', $1)", &[&Json(&big)])
        .unwrap();
    let back: Json<Value> = c
        .query_one("SELECT checkpoint_load(NULL, 'run-1')", &[])
        .unwrap()
        .get(0);
    assert_eq!(back.0, big);
    c.execute(
        "SELECT checkpoint_save(NULL, 'run-1', $1)",
        &[&Json(json!({"step": 8}))],
    )
    .unwrap();
    let back: Json<Value> = c
        .query_one("SELECT checkpoint_load(NULL, 'run-1')", &[])
        .unwrap()
        .get(0);
    assert_eq!(back.0, json!({"step": 8}));
    let rows: i64 = c
        .query_one("SELECT count(*) FROM memory.checkpoints", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);
}

#[test]
fn concurrent_saves_leave_one_whole_state() {
    let r = role();
    let user = unique("cp-race");
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let user = user.clone();
            std::thread::spawn(move || {
                let mut c = connect_as(r);
                c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
                    .unwrap();
                for i in 0..25 {
                    let s = json!({"writer": k, "i": i, "pad": "x".repeat(1000 * (k + 1))});
                    c.execute("SELECT checkpoint_save(NULL, 'shared', $1)", &[&Json(s)])
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut c = connect_as(r);
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
    let back: Json<Value> = c
        .query_one("SELECT checkpoint_load(NULL, 'shared')", &[])
        .unwrap()
        .get(0);
    let k = back.0["writer"].as_u64().unwrap() as usize;
    assert_eq!(back.0["pad"].as_str().unwrap().len(), 1000 * (k + 1));
    assert_eq!(back.0["i"], 24, "the last save of some writer");
}

#[test]
fn another_tenant_sees_no_checkpoint() {
    let r = role();
    let (a, b) = (unique("cp-a"), unique("cp-b"));
    let mut c = connect_as(r);
    c.batch_execute(&format!("SET memory_ext.user_id = '{a}'"))
        .unwrap();
    c.execute("SELECT checkpoint_save(NULL, 't', '{\"secret\": 1}')", &[])
        .unwrap();
    c.batch_execute(&format!("SET memory_ext.user_id = '{b}'"))
        .unwrap();
    let none: Option<Json<Value>> = c
        .query_one("SELECT checkpoint_load(NULL, 't')", &[])
        .unwrap()
        .get(0);
    assert!(none.is_none());
    let e = c
        .query_one("SELECT checkpoint_load($1, 't')", &[&a])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");
}
