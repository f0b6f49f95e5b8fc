//! The gateway's only access to memory: one SQL function per MCP request (`memory_tools`,
//! `memory_tool_call`, `memory_prompt`), each in its own short transaction that names the tenant
//! with `set_config(..., is_local => true)`. The setting ends with the transaction, so a pooled
//! connection never carries one request's tenant into the next.

use crate::config::Tenant;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use postgres_native_tls::MakeTlsConnector;
use serde_json::Value;
use std::str::FromStr;
use tokio_postgres::types::ToSql;

/// Why a request failed: the database refused it (a SQL error with its SQLSTATE and message,
/// shown to the model as the tool's error text), or the gateway could not reach it.
#[derive(Debug)]
pub enum DbError {
    Sql { code: String, message: String },
    Unavailable(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Sql { code, message } => write!(f, "{message} (SQLSTATE {code})"),
            DbError::Unavailable(m) => write!(f, "database unavailable: {m}"),
        }
    }
}

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.as_db_error() {
            Some(db) => DbError::Sql {
                code: db.code().code().to_string(),
                message: db.message().to_string(),
            },
            None => DbError::Unavailable(e.to_string()),
        }
    }
}

pub struct Db {
    pool: Pool,
    /// The pool's connection settings, for the one connection that LISTENs (src/watch.rs).
    cfg: tokio_postgres::Config,
    /// Each call's statement_timeout, in milliseconds (config.rs `Limits`).
    statement_timeout_ms: u64,
}

/// The environment variable naming a PEM file of the CA that signed the server's certificate.
pub const ROOT_CERT_VAR: &str = "MEMORY_MCP_SSLROOTCERT";

/// TLS to Postgres, as the DSN's `sslmode` asks (`prefer` when absent: TLS when the server
/// offers it; `require`; `disable`). Without a root certificate the server's certificate is not
/// checked — libpq's `require`: encrypted, not authenticated. With one
/// ([`ROOT_CERT_VAR`]) the certificate and the host name are verified, as libpq's
/// `verify-full`.
fn tls() -> Result<MakeTlsConnector, String> {
    let mut b = native_tls::TlsConnector::builder();
    match std::env::var(ROOT_CERT_VAR) {
        Ok(path) if !path.is_empty() => {
            let pem = std::fs::read(&path).map_err(|e| format!("{ROOT_CERT_VAR} {path}: {e}"))?;
            let cert = native_tls::Certificate::from_pem(&pem)
                .map_err(|e| format!("{ROOT_CERT_VAR} {path}: {e}"))?;
            b.add_root_certificate(cert);
        }
        _ => {
            b.danger_accept_invalid_certs(true);
            b.danger_accept_invalid_hostnames(true);
        }
    }
    b.build()
        .map(MakeTlsConnector::new)
        .map_err(|e| format!("TLS: {e}"))
}

/// A thread's context as text, $1 the thread (Db::thread).
const THREAD_TEXT: &str = "SELECT coalesce(string_agg(CASE WHEN is_summary THEN '[summary] ' ELSE '[' || seq || '] ' END \
     || role || ': ' || content, E'\\n'), '') FROM context_messages($1)";

impl Db {
    /// A pool of at most `size` connections to `dsn`, after checking that its role is one that
    /// row-level security applies to and that the extension is installed. Each call's SQL runs
    /// at most `statement_timeout_ms`.
    pub async fn connect(dsn: &str, size: usize, statement_timeout_ms: u64) -> Result<Db, String> {
        let mut cfg = tokio_postgres::Config::from_str(dsn).map_err(|e| format!("--dsn: {e}"))?;
        if cfg.get_application_name().is_none() {
            cfg.application_name("memory-mcp");
        }
        let manager = Manager::from_config(
            cfg.clone(),
            tls()?,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .build()
            .map_err(|e| e.to_string())?;
        let db = Db {
            pool,
            cfg,
            statement_timeout_ms,
        };
        db.check().await?;
        Ok(db)
    }

    async fn check(&self) -> Result<(), String> {
        let c = self
            .pool
            .get()
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let row = c
            .query_one(
                "SELECT current_user::text, r.rolsuper, r.rolbypassrls,
                        (SELECT extversion FROM pg_extension WHERE extname = 'memory_ext')
                   FROM pg_roles r WHERE r.rolname = current_user",
                &[],
            )
            .await
            .map_err(|e| format!("cannot check the role: {e}"))?;
        let (role, superuser, bypass, version): (String, bool, bool, Option<String>) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        if superuser || bypass {
            return Err(format!(
                "role \"{role}\" is a superuser or has BYPASSRLS: row-level security would not \
                 keep tenants apart. Connect as an ordinary role (docs/mcp.md shows one)."
            ));
        }
        if version.is_none() {
            return Err("memory_ext is not installed in this database (CREATE EXTENSION memory_ext CASCADE)".into());
        }
        Ok(())
    }

    /// One statement returning one text value (None: no row, or NULL), in a transaction acting
    /// for `user_id` on behalf of `acting` (history's actor names it: sql/triggers.sql
    /// `memory._actor`; empty for MCP calls, whose actor is the role alone). The inspector's
    /// export passes a document on through this without parsing it.
    pub async fn text(
        &self,
        user_id: &str,
        acting: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<String>, DbError> {
        let mut c = self
            .pool
            .get()
            .await
            .map_err(|e| DbError::Unavailable(e.to_string()))?;
        let tx = c.transaction().await?;
        // The tenant, the call's time limit and whom it acts for, for this transaction only.
        tx.execute(
            "SELECT set_config('memory_ext.user_id', $1, true), set_config('statement_timeout', $2, true),
                    set_config('memory_ext.on_behalf_of', $3, true)",
            &[&user_id, &self.statement_timeout_ms.to_string(), &acting],
        )
        .await?;
        let text: Option<String> = tx.query_opt(sql, params).await?.and_then(|r| r.get(0));
        tx.commit().await?;
        Ok(text)
    }

    /// One statement returning one text value, for an MCP request.
    async fn one(
        &self,
        user_id: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<String, DbError> {
        self.text(user_id, "", sql, params)
            .await?
            .ok_or_else(|| DbError::Unavailable(format!("no answer from {sql}")))
    }

    /// One statement returning one JSON value (None when it found nothing: another tenant's id,
    /// say), acting on behalf of `acting`. The inspector's every page and action is one of these.
    pub async fn json(
        &self,
        user_id: &str,
        acting: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Value>, DbError> {
        self.text(user_id, acting, sql, params)
            .await?
            .map(|t| serde_json::from_str(&t).map_err(|e| DbError::Unavailable(e.to_string())))
            .transpose()
    }

    /// A connection of its own, outside the pool, with its connection task left to the caller
    /// (which reads its notifications: src/watch.rs).
    pub async fn dedicated(
        &self,
    ) -> Result<
        (
            tokio_postgres::Client,
            tokio_postgres::Connection<
                tokio_postgres::Socket,
                postgres_native_tls::TlsStream<tokio_postgres::Socket>,
            >,
        ),
        String,
    > {
        self.cfg
            .connect(tls()?)
            .await
            .map_err(|e| format!("cannot connect: {e}"))
    }

    /// The notification tags `user_id` may read (memory_changes' `tags`: its own, then its
    /// spaces'), which `NOTIFY memory_ext_changes` payloads carry (src/watch.rs, src/webhook.rs).
    pub async fn tags(&self, user_id: &str) -> Result<Vec<String>, DbError> {
        Ok(self
            .json(
                user_id,
                "",
                "SELECT (memory_changes(NULL, 1) -> 'tags')::text",
                &[],
            )
            .await?
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default())
    }

    /// The pool's state for `/metrics`.
    pub fn pool_state(&self) -> crate::metrics::PoolState {
        let s = self.pool.status();
        crate::metrics::PoolState {
            in_use: s.size.saturating_sub(s.available),
            idle: s.available,
            max: s.max_size,
            waiting: s.waiting,
        }
    }

    /// The tenant's tool definitions in MCP's `tools/list` shape.
    pub async fn tools(&self, t: &Tenant) -> Result<Vec<Value>, DbError> {
        let text = self
            .one(
                &t.user_id,
                "SELECT memory_tools($1, 'mcp', $2)::text",
                &[&t.agent_id, &t.tools],
            )
            .await?;
        serde_json::from_str(&text).map_err(|e| DbError::Unavailable(e.to_string()))
    }

    /// Runs one tool call: the text for the model and whether it is an error.
    pub async fn call(
        &self,
        t: &Tenant,
        name: &str,
        arguments: &Value,
    ) -> Result<(String, bool), DbError> {
        let text = self
            .one(
                &t.user_id,
                "SELECT memory_tool_call($1, $2, $3, $4::text::jsonb)::text",
                &[&t.agent_id, &t.thread_id, &name, &arguments.to_string()],
            )
            .await?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| DbError::Unavailable(e.to_string()))?;
        Ok((
            v["content"].as_str().unwrap_or_default().to_string(),
            v["is_error"].as_bool().unwrap_or(false),
        ))
    }

    /// The agent's compiled core blocks (the resource memory://core-blocks).
    pub async fn blocks(&self, t: &Tenant) -> Result<String, DbError> {
        self.one(&t.user_id, "SELECT compile_core_blocks($1)", &[&t.agent_id])
            .await
    }

    /// A thread's context as a resource (memory://threads/{thread_id}): its messages in prompt
    /// order (context_messages), one `[seq] role: content` line each (`[summary]` for the
    /// summary of what compaction folded).
    pub async fn thread(&self, t: &Tenant, thread: &str) -> Result<String, DbError> {
        self.one(&t.user_id, THREAD_TEXT, &[&thread]).await
    }

    /// What a subscriber to a resource watches, hashed (src/watch.rs): the agent's blocks as
    /// compile_blocks hashes them, or the thread's context text; None when it cannot be read.
    pub async fn resource_hash(&self, t: &Tenant, thread: Option<&str>) -> Option<String> {
        let (sql, arg) = match thread {
            None => (
                "SELECT compile_blocks($1) ->> 'hash'".to_string(),
                t.agent_id.as_str(),
            ),
            Some(th) => (format!("SELECT md5(({THREAD_TEXT}))"), th),
        };
        self.text(&t.user_id, "", &sql, &[&arg])
            .await
            .ok()
            .flatten()
    }

    /// The memory section of the agent's system prompt: its compiled core blocks, then the
    /// memory instructions naming the tools it is offered. An MCP host puts the server's
    /// instructions in the system prompt; without the blocks there, the instructions' "core
    /// memory is the <memory_blocks> section above" would point at nothing.
    pub async fn prompt(&self, t: &Tenant) -> Result<String, DbError> {
        self.one(
            &t.user_id,
            "SELECT compile_core_blocks($1) || E'\n\n' || memory_prompt($1, NULL, $2)",
            &[&t.agent_id, &t.tools],
        )
        .await
    }
}
