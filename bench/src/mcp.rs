//! `memory_ext_bench mcp`: what the MCP gateway (crates/memory_gateway) adds over running the same
//! statements itself. A `memory-mcp http` process (MEMORY_MCP_BIN) serves one tenant; each pair
//! runs one tool call both ways, in alternation: a JSON-RPC `tools/call` POSTed to the gateway,
//! and, on one connection of the same ordinary role, the transaction the gateway runs (BEGIN,
//! set_config of the tenant, memory_tool_call, COMMIT).

use crate::query::pct;
use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 200;
const ROLE: &str = "memory_mcp_bench";
const USER: &str = "bench-mcp";
const AGENT: &str = "bench-mcp-agent";
const THREAD: &str = "bench-mcp-thread";
const TOKEN: &str = "bench-mcp-token-0123456789";

pub struct Gateway(pub Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn run(dsn: &str) -> (Value, String) {
    let bin = std::env::var("MEMORY_MCP_BIN").expect("MEMORY_MCP_BIN: the memory-mcp binary");
    let mut admin = Client::connect(dsn, NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
                 CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOBYPASSRLS; END IF; END$$;
             SET memory_ext.user_id = '{USER}';
             SELECT memory_agent('{AGENT}', '{USER}', 'I help.', 'Name: Bea');"
        ))
        .unwrap();
    let db_name: String = admin
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    admin
        .batch_execute(&format!(
            "GRANT CONNECT ON DATABASE \"{db_name}\" TO {ROLE}"
        ))
        .unwrap();
    for i in 0..200 {
        admin
            .query_one(
                "SELECT message_append($1, 'user', $2, $3)",
                &[
                    &THREAD,
                    &format!("Message {i}: the tomatoes need water on Tuesday."),
                    &USER,
                ],
            )
            .unwrap();
    }
    let role_dsn = format!("{dsn} user={ROLE}");
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("memory_mcp_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        json!({"dsn": role_dsn, "listen": format!("127.0.0.1:{port}"),
               "tenants": [{"token": TOKEN, "user_id": USER, "agent_id": AGENT, "thread_id": THREAD}]})
        .to_string(),
    )
    .unwrap();
    let _gateway = Gateway(
        Command::new(&bin)
            .args(["http", "--config", config.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e}")),
    );
    let http = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while http.get(format!("{base}/healthz")).call().is_err() {
        assert!(Instant::now() < deadline, "memory-mcp http did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut direct = Client::connect(&role_dsn, NoTls).unwrap();
    let calls: [(&str, &str, Value); 2] = [
        (
            "core block append",
            "memory_append",
            json!({"block": "persona", "content": "x"}),
        ),
        (
            "conversation search",
            "conversation_search",
            json!({"query": "tomatoes water"}),
        ),
    ];
    let mut rows = String::new();
    let mut out = vec![];
    for (label, name, args) in calls {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": name, "arguments": args}})
        .to_string();
        let args_text = args.to_string();
        let (mut g, mut d) = (vec![], vec![]);
        for i in 0..RUNS + 10 {
            // Keep the block from growing past its limit.
            admin
                .batch_execute(&format!(
                    "SELECT block_set('{AGENT}', 'persona', 'I help.')"
                ))
                .unwrap();
            let t = Instant::now();
            let reply: Value = http
                .post(format!("{base}/mcp"))
                .header("Authorization", &format!("Bearer {TOKEN}"))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-06-18")
                .send(&body)
                .unwrap()
                .body_mut()
                .read_json()
                .unwrap();
            let a = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(reply["result"]["isError"], json!(false), "{reply}");
            admin
                .batch_execute(&format!(
                    "SELECT block_set('{AGENT}', 'persona', 'I help.')"
                ))
                .unwrap();
            let t = Instant::now();
            let mut tx = direct.transaction().unwrap();
            tx.execute(
                "SELECT set_config('memory_ext.user_id', $1, true)",
                &[&USER],
            )
            .unwrap();
            tx.query_one(
                "SELECT memory_tool_call($1, $2, $3, $4::text::jsonb)::text",
                &[&AGENT, &THREAD, &name, &args_text],
            )
            .unwrap();
            tx.commit().unwrap();
            let b = t.elapsed().as_secs_f64() * 1e3;
            if i >= 10 {
                g.push(a);
                d.push(b);
            }
        }
        let (g50, g95, d50, d95) = (
            pct(&mut g, 50.0),
            pct(&mut g, 95.0),
            pct(&mut d, 50.0),
            pct(&mut d, 95.0),
        );
        rows += &format!(
            "| {label} (`{name}`) | {g50:.2} | {g95:.2} | {d50:.2} | {d95:.2} | {:.2} |\n",
            g50 - d50
        );
        out.push(json!({"call": label, "tool": name, "runs": RUNS,
                        "gateway_ms": {"p50": g50, "p95": g95},
                        "direct_ms": {"p50": d50, "p95": d95}, "overhead_p50_ms": g50 - d50}));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let md = format!(
        "# MCP gateway: a tools/call through memory-mcp against the same statements run directly\n\n\
         Release builds, 2 cores, all on 127.0.0.1. The gateway (`memory-mcp http`, streamable \
         HTTP, stateless, JSON responses) is called with a plain HTTP client (ureq, one kept-alive \
         connection); the direct side runs the transaction the gateway runs (BEGIN, set_config, \
         memory_tool_call, COMMIT) on one connection of the same ordinary role. {RUNS} runs of \
         each, in alternation, after 10 warm-up runs; one tenant with 200 messages.\n\n\
         | call | through memory-mcp p50 ms | p95 ms | direct p50 ms | p95 ms | overhead p50 ms |\n\
         |---|---|---|---|---|---|\n{rows}"
    );
    (json!({"suite": "mcp", "results": out}), md)
}
