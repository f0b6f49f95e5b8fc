//! memory-mcp: memory_ext's agent tools served over the Model Context Protocol, on stdio (one
//! tenant per process, for desktop hosts) or streamable HTTP (one tenant per bearer token).
//! Every MCP request is one SQL call; the rules live in the extension (docs/mcp.md). Over HTTP
//! the same server also serves the memory inspector (src/inspect/, docs/inspector.md) and
//! Prometheus metrics (src/metrics.rs), over the one pool and the one token file.

mod config;
mod db;
mod gateway;
mod http;
mod inspect;
mod metrics;
mod watch;
mod webhook;

use config::Command;
use rmcp::ServiceExt;
use std::sync::Arc;

/// A stdio process serves one client, one call at a time; HTTP requests share the pool
/// (config.rs `Limits::pool_size`).
const STDIO_POOL: usize = 2;

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
    let limits = config::Limits::default();
    // A wrong user or agent fails here, not at the host's first tool call.
    let ready = async {
        let db = Arc::new(db::Db::connect(&dsn, STDIO_POOL, limits.statement_timeout_ms).await?);
        db.prompt(&tenant)
            .await
            .map_err(|e| format!("agent \"{}\": {e}", tenant.agent_id))?;
        Ok::<_, String>(db)
    };
    let db = match ready.await {
        Ok(db) => db,
        Err(reason) => {
            // Told to the client too: its `initialize` gets the reason (gateway::Refusal).
            eprintln!("memory-mcp: {reason}");
            if let Ok(s) = gateway::Refusal(reason.clone())
                .serve(rmcp::transport::stdio())
                .await
            {
                let _ = s.waiting().await;
            }
            return Err(reason);
        }
    };
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
    let db = Arc::new(
        db::Db::connect(&dsn, cfg.limits.pool_size, cfg.limits.statement_timeout_ms).await?,
    );
    // Every configured tenant is checked now (its agent exists, its user may act), so that a
    // mistake in the file fails the start, not some client's `initialize` later.
    let mut wrong = vec![];
    for t in cfg.tokens.tenants() {
        if let Err(e) = db.prompt(t).await {
            wrong.push(format!(
                "user \"{}\", agent \"{}\": {e}",
                t.user_id, t.agent_id
            ));
        }
    }
    if !wrong.is_empty() {
        return Err(format!("{path}: {}", wrong.join("; ")));
    }
    eprintln!("memory-mcp: {} tenant(s) from {path}", cfg.tokens.count());
    if !cfg.webhooks.is_empty() {
        eprintln!("memory-mcp: {} webhook(s)", cfg.webhooks.len());
        webhook::start(db.clone(), std::mem::take(&mut cfg.webhooks), &cfg.limits);
    }
    http::serve(cfg, db).await
}
