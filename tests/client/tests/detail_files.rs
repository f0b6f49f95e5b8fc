//! Detail memory and memory files through the Rust driver as a real non-superuser role: a 10 MB
//! output stored and read back page by page unchanged, kept out of memory_query; files written
//! concurrently to one path leave one whole file; another tenant's role sees none of it.

use memory_ext_client_tests::{connect_as, ensure_role, sqlstate, unique};
use postgres::types::Json;
use serde_json::Value;

fn role() -> &'static str {
    let mut a = memory_ext_client_tests::admin();
    ensure_role(&mut a, "memory_files_role");
    "memory_files_role"
}

fn tenant(c: &mut postgres::Client, user: &str) {
    c.batch_execute(&format!("SET memory_ext.user_id = '{user}'"))
        .unwrap();
}

#[test]
fn a_ten_megabyte_detail_round_trips_by_pages_and_stays_out_of_retrieval() {
    let mut c = connect_as(role());
    let user = unique("detail");
    tenant(&mut c, &user);
    // Multi-byte characters on purpose: pages are counted in characters, not bytes.
    let content: String = (0..300_000)
        .map(|i| format!("line {i}: npm http fetch GET 200 → ok\n"))
        .collect();
    assert!(content.len() > 10_000_000);
    let stored: Json<Value> = c
        .query_one(
            "SELECT memory_ref_store($1, 'npm install log', thread_id => 'build-1')",
            &[&content],
        )
        .unwrap()
        .get(0);
    let key = stored.0["key"].as_str().unwrap().to_string();
    assert_eq!(key, "npm_install_log");
    assert_eq!(
        stored.0["placeholder"],
        "[MemoryRef: npm_install_log - npm install log]"
    );
    let mut back = String::new();
    let mut offset: i32 = 0;
    let mut pages = 0;
    loop {
        let page: Json<Value> = c
            .query_one("SELECT memory_ref_get($1, $2, 1000000)", &[&key, &offset])
            .unwrap()
            .get(0);
        assert_eq!(
            page.0["total"].as_i64().unwrap() as usize,
            content.chars().count()
        );
        back.push_str(page.0["content"].as_str().unwrap());
        pages += 1;
        match page.0["next_offset"].as_i64() {
            Some(n) => offset = n as i32,
            None => break,
        }
    }
    assert_eq!(back, content, "the pages reassemble the content exactly");
    assert!(pages >= 10, "{pages}");
    // memory_query finds the placeholder, in bullets and in full, never the content.
    for mode in ["bullets", "full"] {
        let r: Json<Value> = c
            .query_one(
                &format!(
                    r#"SELECT memory_query('{{"query": "npm install log", "return": "{mode}"}}')"#
                ),
                &[],
            )
            .unwrap()
            .get(0);
        let items = r.0["items"].as_array().unwrap();
        // "(day it happened) " and the Layer-1 line.
        let line = items[0]["text"].as_str().unwrap();
        assert!(
            line.starts_with('(')
                && line.ends_with(") [MemoryRef: npm_install_log - npm install log]"),
            "{line}"
        );
        let text = r.0.to_string();
        assert!(text.len() < 10_000, "{mode}: {} bytes", text.len());
    }
    // Another tenant: not found.
    let mut other = connect_as(role());
    tenant(&mut other, &unique("detail-other"));
    let e = other
        .query_one("SELECT memory_ref_get($1)", &[&key])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "P0002");
}

#[test]
fn capture_keeps_small_outputs_and_stores_large_ones() {
    let mut c = connect_as(role());
    tenant(&mut c, &unique("capture"));
    let small: String = c
        .query_one("SELECT memory_capture('ls', 'a.txt b.txt')", &[])
        .unwrap()
        .get(0);
    assert_eq!(small, "a.txt b.txt");
    let log: String = (0..2000)
        .map(|i| format!("step {i} ok\n"))
        .chain(std::iter::once("npm ERR! code ERESOLVE\n".to_string()))
        .collect();
    let line: String = c
        .query_one(
            "SELECT memory_capture('npm install', $1, 500, thread_id => 't')",
            &[&log],
        )
        .unwrap()
        .get(0);
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.starts_with(
            "Command 'npm install' executed. Output stored in [MemoryRef: cmd_npm_install - "
        ),
        "{line}"
    );
    assert!(line.contains("Status: Failed."), "{line}");
    assert!(line.contains("npm ERR! code ERESOLVE"), "{line}");
    let page: Json<Value> = c
        .query_one("SELECT memory_ref_get('cmd_npm_install', 0, 100000)", &[])
        .unwrap()
        .get(0);
    assert_eq!(page.0["content"].as_str().unwrap(), log);
}

#[test]
fn concurrent_writes_to_one_path_leave_one_whole_file_and_edits_serialise() {
    let r = role();
    let user = unique("files-race");
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let user = user.clone();
            std::thread::spawn(move || {
                let mut c = connect_as(r);
                tenant(&mut c, &user);
                for i in 0..10 {
                    let body = format!("writer {k} version {i}\n{}", "x".repeat(500 * (k + 1)));
                    c.execute("SELECT memory_file_write('shared/notes.md', $1)", &[&body])
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut c = connect_as(r);
    tenant(&mut c, &user);
    let (n, content): (i64, String) = {
        let row = c
            .query_one(
                "SELECT count(*) OVER (), content FROM memory.files WHERE path = 'shared/notes.md'",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(n, 1);
    let k: usize = content
        .strip_prefix("writer ")
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        content.lines().nth(1).unwrap().len(),
        500 * (k + 1),
        "one writer's file, whole"
    );

    // Two sessions editing different lines of one file: both edits land.
    c.execute(
        "SELECT memory_file_write('todo.md', E'- [ ] a\\n- [ ] b\\n')",
        &[],
    )
    .unwrap();
    let hs: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|x| {
            let user = user.clone();
            std::thread::spawn(move || {
                let mut c = connect_as(r);
                tenant(&mut c, &user);
                c.execute(
                    "SELECT memory_file_edit('todo.md', $1, $2)",
                    &[&format!("- [ ] {x}"), &format!("- [x] {x}")],
                )
                .unwrap();
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let after: Json<Value> = c
        .query_one("SELECT memory_file_read('todo.md')", &[])
        .unwrap()
        .get(0);
    assert_eq!(after.0["content"], "- [x] a\n- [x] b\n");
}

#[test]
fn files_are_per_tenant_and_rls_guards_the_table() {
    let r = role();
    let (u1, u2) = (unique("files-a"), unique("files-b"));
    let mut a = connect_as(r);
    tenant(&mut a, &u1);
    a.execute(
        "SELECT memory_file_write('secret/plan.md', 'the launch is on Monday')",
        &[],
    )
    .unwrap();
    let mut b = connect_as(r);
    tenant(&mut b, &u2);
    let visible: i64 = b
        .query_one("SELECT count(*) FROM memory.files", &[])
        .unwrap()
        .get(0);
    assert_eq!(visible, 0);
    let grep = b
        .query("SELECT * FROM memory_file_grep('launch')", &[])
        .unwrap();
    assert!(grep.is_empty());
    let e = b
        .query_one("SELECT memory_file_read('secret/plan.md')", &[])
        .unwrap_err();
    assert_eq!(sqlstate(&e), "P0002");
    // A plain INSERT naming the other tenant is refused by row-level security.
    let e = b
        .execute(
            "INSERT INTO memory.files (user_id, path, content) VALUES ($1, 'x.md', 'y')",
            &[&u1],
        )
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42501");
    assert!(!b
        .query_one("SELECT memory_file_delete('secret/plan.md')", &[])
        .unwrap()
        .get::<_, bool>(0));
    let still: String = a
        .query_one(
            "SELECT memory_file_read('secret/plan.md') ->> 'content'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(still, "the launch is on Monday");
}
