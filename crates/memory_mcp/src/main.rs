//! memory-mcp: memory_ext's agent tools served over the Model Context Protocol, on stdio (one
//! tenant per process, for desktop hosts) or streamable HTTP (one tenant per bearer token).
//! Every MCP request is one SQL call; the rules live in the extension (docs/mcp.md).

mod config;
mod db;
mod gateway;
mod http;

use config::Command;
use rmcp::ServiceExt;
use std::sync::Arc;

/// A stdio process serves one client, one call at a time; HTTP requests share the pool.
const STDIO_POOL: usize = 2;
const HTTP_POOL: usize = 16;

fn dsn_or_exit(dsn: Option<String>) -> String {
    dsn.unwrap_or_else(|| {
        eprintln!(
            "memory-mcp: no database: give --dsn (or MEMORY_MCP_DSN)\n\n{}",
            config::USAGE
        );
        std::process::exit(2)
    })
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match config::parse_args(&args, |v| std::env::var(v).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("memory-mcp: {e}");
            std::process::exit(2)
        }
    };
    let result = match command {
        Command::Help => {
            println!("{}", config::USAGE);
            Ok(())
        }
        Command::HashToken(t) => {
            println!("{}", config::sha256_hex(&t));
            Ok(())
        }
        Command::Stdio { dsn, tenant } => stdio(dsn_or_exit(dsn), tenant).await,
        Command::Http {
            config,
            dsn,
            listen,
        } => http(config, dsn, listen).await,
    };
    if let Err(e) = result {
        eprintln!("memory-mcp: {e}");
        std::process::exit(1)
    }
}

async fn stdio(dsn: String, tenant: config::Tenant) -> Result<(), String> {
    let db = Arc::new(db::Db::connect(&dsn, STDIO_POOL).await?);
    // A wrong user or agent fails here, not at the host's first tool call.
    db.prompt(&tenant)
        .await
        .map_err(|e| format!("agent \"{}\": {e}", tenant.agent_id))?;
    let server = gateway::Gateway::new(db, Some(tenant))
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("stdio: {e}"))?;
    server
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("stdio: {e}"))
}

async fn http(path: String, dsn: Option<String>, listen: Option<String>) -> Result<(), String> {
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut cfg = config::parse_http(&text)?;
    if let Some(l) = listen {
        cfg.listen = l;
    }
    let dsn = dsn_or_exit(dsn.or(cfg.dsn.take()));
    let db = Arc::new(db::Db::connect(&dsn, HTTP_POOL).await?);
    eprintln!("memory-mcp: {} tenant(s) from {path}", cfg.tokens.count());
    http::serve(cfg, db).await
}
