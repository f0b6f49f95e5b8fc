//! Server control for the worker tests: `scripts/test.sh worker` starts a server with
//! memory_ext (and pg_cron) preloaded, `memory_ext.database` = the test database, and passes
//! its data directory and port, so that tests can stop, start and crash it.

use postgres::{Client, NoTls};
use std::process::Command;
use std::time::{Duration, Instant};

pub use memory_ext_client_tests::{dsn, unique};

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: run these through `scripts/test.sh worker`"))
}

/// A superuser connection, retried while the server (re)starts, for up to a minute.
pub fn admin() -> Client {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match Client::connect(&dsn(), NoTls) {
            Ok(c) => return c,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("server did not come back: {e}"),
        }
    }
}

fn cluster(cmd: &str) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");
    let dir = env("MEMORY_EXT_TEST_PGDATA");
    let port = env("MEMORY_EXT_TEST_PORT");
    let status = Command::new(script)
        .args([cmd, dir.as_str(), port.as_str()])
        .status()
        .expect("run scripts/cluster.sh");
    assert!(status.success(), "cluster.sh {cmd} failed");
}

/// `pg_ctl stop -m fast` (SIGTERM to every backend and the worker), waiting for the end.
pub fn stop_server() {
    cluster("stop");
}

pub fn start_server() {
    cluster("start");
}

/// The worker's pid, waiting up to `secs` for it to show in pg_stat_activity.
pub fn worker_pid(c: &mut Client, secs: u64) -> Option<i32> {
    poll(secs, || {
        c.query_opt(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'memory_ext worker'",
            &[],
        )
        .ok()
        .flatten()
        .map(|r| r.get(0))
    })
}

/// Polls `f` every 200 ms until it gives a value or `secs` pass.
pub fn poll<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Sets server-wide settings (ALTER SYSTEM) and reloads: the worker reads them on SIGHUP.
/// `None` resets one.
pub fn set_system(c: &mut Client, settings: &[(&str, Option<&str>)]) {
    for (name, value) in settings {
        let sql = match value {
            Some(v) => format!("ALTER SYSTEM SET {name} = '{v}'"),
            None => format!("ALTER SYSTEM RESET {name}"),
        };
        c.batch_execute(&sql).unwrap();
    }
    c.batch_execute("SELECT pg_reload_conf()").unwrap();
    // The worker applies a reload after its current nap (memory_ext.worker_naptime = 1 s here).
    std::thread::sleep(Duration::from_millis(2500));
}
