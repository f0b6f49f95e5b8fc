//! Who a connection acts for, and how that is configured: the tenant of a stdio connection comes
//! from the command line or environment, the tenant of an HTTP request from its bearer token,
//! mapped here from the server's own file. Never from a tool argument: the model chooses what to
//! call, not whose memory it reads. Plain Rust, tested by `cargo test -p memory_gateway`.

use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// What one connection or request acts as: `memory_ext.user_id`, the agent whose tools and
/// blocks it uses, the conversation its calls belong to (none: searches span every thread the
/// agent reads), and the tools offered (none: the agent's default set).
#[derive(Debug, Clone, PartialEq)]
pub struct Tenant {
    pub user_id: String,
    pub agent_id: String,
    pub thread_id: Option<String>,
    pub tools: Option<Vec<String>>,
}

/// One entry of the HTTP configuration's `tenants`: a tenant and the credential that selects
/// it, as the token itself or (so the file holds no secret) its SHA-256 in hex.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_sha256: Option<String>,
    user_id: String,
    agent_id: String,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    tools: Option<Vec<String>>,
    /// What the token is called in history (`memory_mcp (inspector: <name>)`); default
    /// `tenants[i]`.
    #[serde(default)]
    name: Option<String>,
    /// Whether the token opens the inspector (src/inspect/), and may it change memory.
    #[serde(default)]
    inspect: Inspect,
    /// Where the tenant's changes are posted (src/webhook.rs).
    #[serde(default)]
    webhooks: Vec<WebhookEntry>,
}

/// One webhook of a token's entry: where its tenant's changes go, the secret they are signed
/// with, and which entities it wants (none: every one).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookEntry {
    url: String,
    secret: String,
    #[serde(default)]
    events: Option<Vec<String>>,
}

/// A webhook, checked: its URL's target is among the configuration's `webhook_targets`.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub tenant: Tenant,
    pub url: String,
    pub secret: String,
    /// Entities posted (memory, block, message, file, store_item, proposal); None: all.
    pub events: Option<Vec<String>>,
}

/// The entities of the change feed (sql/changes.sql), which a webhook's `events` may name.
pub const WEBHOOK_EVENTS: [&str; 6] = [
    "memory",
    "block",
    "message",
    "file",
    "store_item",
    "proposal",
];

/// A webhook secret shorter than this is refused: a signature is only as strong as its key.
const MIN_SECRET_LEN: usize = 16;

/// The `host:port` a URL points at (the port given, or the scheme's), and its scheme; None
/// for what is not an http(s) URL with a host.
pub fn url_target(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let default = match scheme {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let target = if authority.starts_with('[') {
        match authority.rsplit_once("]:") {
            Some(_) => authority.to_string(),
            None => format!("{authority}:{default}"),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() => authority.to_string(),
            Some(_) => return None,
            None => format!("{authority}:{default}"),
        }
    };
    Some((target.to_ascii_lowercase(), scheme.to_string()))
}

/// What a token may do in the memory inspector: nothing (the default: a token made for an
/// agent's MCP client does not open the browser pages), look, or look and change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inspect {
    #[default]
    None,
    Read,
    ReadWrite,
}

/// What a bearer token grants: its tenant, its name, and its inspector access.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub tenant: Tenant,
    pub name: String,
    pub inspect: Inspect,
}

/// `/metrics` (src/metrics.rs): the token a scraper sends, and optionally an address of its own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricsEntry {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_sha256: Option<String>,
    #[serde(default)]
    listen: Option<String>,
}

/// The metrics endpoint's configuration: a scrape needs the token (its SHA-256 kept here); it
/// is served on `listen` when given (a port that only the monitoring network reaches), else
/// beside `/mcp`.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    pub token_sha256: String,
    pub listen: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    dsn: Option<String>,
    #[serde(default)]
    listen: Option<String>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    metrics: Option<MetricsEntry>,
    /// The `host:port`s webhooks may post to; a webhook elsewhere is refused at start-up.
    #[serde(default)]
    webhook_targets: Vec<String>,
    tenants: Vec<Entry>,
}

/// What bounds the server: connections, time, bytes, and each tenant's share (docs/mcp.md
/// "Limits"). Every field has a safe default; the configuration file's `"limits"` object
/// overrides any of them.
///
/// # Why these defaults
/// A request to this server is one small JSON-RPC message and one SQL call, so a client that
/// takes seconds to send its headers or body is stalled or hostile: 10 s for headers (also how
/// long an idle keep-alive connection stays open) and 30 s for a body of at most 4 MiB (a memory
/// file's content is a tool argument). 256 connections, of which at most 32 not yet
/// authenticated, bound what 600 slow clients can hold (each one buffers at most one body). A
/// tenant runs 4 calls at once, a quarter of the 16 database connections, so one tenant's
/// flood leaves the rest of the pool to the others; a call waits 10 s for its tenant's turn and
/// then gets 429 with Retry-After. A call's SQL runs at most 30 s (statement_timeout).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Open connections at most; one more is closed at once.
    pub max_connections: usize,
    /// Connections that have not yet sent a request with a known token, at most.
    pub max_unauthenticated: usize,
    /// Milliseconds a client has to send a request's headers; also an idle connection's life.
    pub header_timeout_ms: u64,
    /// Milliseconds a client has to send a request's body.
    pub body_timeout_ms: u64,
    /// Largest request body, in bytes (413 past it, before it is buffered).
    pub max_body_bytes: usize,
    /// Milliseconds one call's SQL may run (its transaction's statement_timeout).
    pub statement_timeout_ms: u64,
    /// Calls of one tenant served at once; more wait their turn in order.
    pub tenant_concurrency: usize,
    /// Milliseconds a call waits for its tenant's turn before the answer is 429.
    pub queue_timeout_ms: u64,
    /// Connections to Postgres.
    pub pool_size: usize,
    /// Milliseconds the server gives requests under way to finish when it is stopped.
    pub shutdown_grace_ms: u64,
    /// Attempts to deliver one webhook post before it becomes a dead letter.
    pub webhook_attempts: u32,
    /// Milliseconds before the first retry of a webhook post; each next one waits twice as long.
    pub webhook_backoff_ms: u64,
    /// Milliseconds a webhook receiver has to answer one post.
    pub webhook_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 256,
            max_unauthenticated: 32,
            header_timeout_ms: 10_000,
            body_timeout_ms: 30_000,
            max_body_bytes: 4 * 1024 * 1024,
            statement_timeout_ms: 30_000,
            tenant_concurrency: 4,
            queue_timeout_ms: 10_000,
            pool_size: 16,
            shutdown_grace_ms: 5_000,
            webhook_attempts: 6,
            webhook_backoff_ms: 1_000,
            webhook_timeout_ms: 10_000,
        }
    }
}

impl Limits {
    fn check(&self) -> Result<(), String> {
        let zero = [
            ("max_connections", self.max_connections as u64),
            ("max_unauthenticated", self.max_unauthenticated as u64),
            ("header_timeout_ms", self.header_timeout_ms),
            ("body_timeout_ms", self.body_timeout_ms),
            ("max_body_bytes", self.max_body_bytes as u64),
            ("statement_timeout_ms", self.statement_timeout_ms),
            ("tenant_concurrency", self.tenant_concurrency as u64),
            ("queue_timeout_ms", self.queue_timeout_ms),
            ("pool_size", self.pool_size as u64),
            ("webhook_attempts", self.webhook_attempts as u64),
            ("webhook_backoff_ms", self.webhook_backoff_ms),
            ("webhook_timeout_ms", self.webhook_timeout_ms),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0);
        if let Some((name, _)) = zero {
            return Err(format!("configuration: limits.{name} must be above 0"));
        }
        if self.max_unauthenticated > self.max_connections {
            return Err(
                "configuration: limits.max_unauthenticated is above limits.max_connections".into(),
            );
        }
        Ok(())
    }
}

/// The HTTP server's configuration (docs/mcp.md shows the file).
#[derive(Debug)]
pub struct HttpConfig {
    pub dsn: Option<String>,
    pub listen: String,
    /// Host names accepted in the `Host` header besides loopback (DNS-rebinding protection).
    pub allowed_hosts: Vec<String>,
    /// Origins (`https://app.example.com`) a browser may call from besides loopback; a request
    /// with another `Origin` is refused (403), as the MCP specification asks of HTTP servers.
    pub allowed_origins: Vec<String>,
    pub limits: Limits,
    pub tokens: Tokens,
    /// None: no `/metrics`.
    pub metrics: Option<MetricsConfig>,
    /// Every token's webhooks (src/webhook.rs).
    pub webhooks: Vec<Webhook>,
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8808";

/// A plaintext token shorter than this is refused: it could be guessed.
const MIN_TOKEN_LEN: usize = 16;

/// Bearer tokens by their SHA-256, so the lookup never compares secrets byte by byte.
#[derive(Debug, Default)]
pub struct Tokens(HashMap<String, Grant>);

impl Tokens {
    pub fn tenant(&self, token: &str) -> Option<&Tenant> {
        self.grant(token).map(|g| &g.tenant)
    }

    pub fn grant(&self, token: &str) -> Option<&Grant> {
        self.0.get(&sha256_hex(token))
    }

    pub fn count(&self) -> usize {
        self.0.len()
    }

    /// Every configured tenant (each once, whatever number of tokens selects it).
    pub fn tenants(&self) -> Vec<&Tenant> {
        let mut all: Vec<&Tenant> = self.0.values().map(|g| &g.tenant).collect();
        all.sort_by(|a, b| (&a.user_id, &a.agent_id).cmp(&(&b.user_id, &b.agent_id)));
        all.dedup();
        all
    }
}

/// Whether a browser page at `origin` may call the server: loopback pages on any port, and the
/// configured origins exactly.
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => rest.split(':').next().unwrap_or_default(),
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

pub fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Parses the HTTP configuration file's text; every mistake is named, with the entry it is in.
pub fn parse_http(text: &str) -> Result<HttpConfig, String> {
    let file: File = serde_json::from_str(text).map_err(|e| format!("configuration: {e}"))?;
    if file.tenants.is_empty() {
        return Err("configuration: \"tenants\" is empty: no request could be served".into());
    }
    let mut tokens = HashMap::new();
    let mut webhooks = vec![];
    let targets: Vec<String> = file
        .webhook_targets
        .iter()
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    for (i, e) in file.tenants.into_iter().enumerate() {
        let at = format!("configuration: tenants[{i}]");
        let tenant = Tenant {
            user_id: e.user_id,
            agent_id: e.agent_id,
            thread_id: e.thread_id,
            tools: e.tools,
        };
        check_tenant(&tenant).map_err(|m| format!("{at}: {m}"))?;
        for (j, w) in e.webhooks.into_iter().enumerate() {
            let at = format!("{at}: webhooks[{j}]");
            let Some((target, _)) = url_target(&w.url) else {
                return Err(format!(
                    "{at}: \"url\" is not an http:// or https:// URL with a host"
                ));
            };
            if !targets.contains(&target) {
                return Err(format!(
                    "{at}: {target} is not among \"webhook_targets\": a webhook posts only where the configuration allows"
                ));
            }
            if w.secret.chars().count() < MIN_SECRET_LEN || w.secret.trim() != w.secret {
                return Err(format!(
                    "{at}: \"secret\" must be at least {MIN_SECRET_LEN} characters, without spaces around it"
                ));
            }
            if let Some(ev) = &w.events {
                if let Some(bad) = ev.iter().find(|e| !WEBHOOK_EVENTS.contains(&e.as_str())) {
                    return Err(format!(
                        "{at}: \"{bad}\" is not an event: {}",
                        WEBHOOK_EVENTS.join(", ")
                    ));
                }
            }
            let hook = Webhook {
                tenant: tenant.clone(),
                url: w.url,
                secret: w.secret,
                events: w.events,
            };
            if webhooks
                .iter()
                .any(|h: &Webhook| h.url == hook.url && h.tenant.user_id == hook.tenant.user_id)
            {
                return Err(format!("{at}: the same URL twice for one tenant"));
            }
            webhooks.push(hook);
        }
        let name = match e.name {
            Some(n)
                if n.trim().is_empty()
                    || n.chars().count() > 100
                    || n.chars().any(char::is_control) =>
            {
                return Err(format!(
                    "{at}: \"name\" must be 1 to 100 characters on one line"
                ))
            }
            Some(n) => n,
            None => format!("tenants[{i}]"),
        };
        let hash = token_hash(&at, e.token, e.token_sha256)?;
        if tokens
            .insert(
                hash,
                Grant {
                    tenant,
                    name,
                    inspect: e.inspect,
                },
            )
            .is_some()
        {
            return Err(format!("{at}: the same token as an earlier entry"));
        }
    }
    let metrics = match file.metrics {
        None => None,
        Some(m) => {
            let token_sha256 = token_hash("configuration: metrics", m.token, m.token_sha256)?;
            if tokens.contains_key(&token_sha256) {
                return Err(
                    "configuration: metrics: the token is also a tenant's; give the scraper its own".into(),
                );
            }
            Some(MetricsConfig {
                token_sha256,
                listen: m.listen,
            })
        }
    };
    file.limits.check()?;
    for o in &file.allowed_origins {
        if !(o.starts_with("http://") || o.starts_with("https://")) || o.ends_with('/') {
            return Err(format!(
                "configuration: allowed_origins: \"{o}\" is not an origin like https://app.example.com"
            ));
        }
    }
    Ok(HttpConfig {
        dsn: file.dsn,
        listen: file.listen.unwrap_or_else(|| DEFAULT_LISTEN.into()),
        allowed_hosts: file.allowed_hosts,
        allowed_origins: file.allowed_origins,
        limits: file.limits,
        tokens: Tokens(tokens),
        metrics,
        webhooks,
    })
}

/// A credential given as the token itself or as its SHA-256 in hex: the hash the server keeps.
fn token_hash(at: &str, token: Option<String>, sha256: Option<String>) -> Result<String, String> {
    let hash = match (token, sha256) {
        // A token with spaces around it could never match: a request's is trimmed.
        (Some(t), None) if t.trim() != t => {
            return Err(format!(
                "{at}: \"token\" has spaces or line breaks around it; remove them"
            ))
        }
        (Some(t), None) if t.chars().count() >= MIN_TOKEN_LEN => sha256_hex(&t),
        (Some(_), None) => {
            return Err(format!(
                "{at}: \"token\" is shorter than {MIN_TOKEN_LEN} characters"
            ))
        }
        (None, Some(h)) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            h.to_ascii_lowercase()
        }
        (None, Some(_)) => {
            return Err(format!(
                "{at}: \"token_sha256\" is not 64 hexadecimal digits"
            ))
        }
        _ => return Err(format!("{at}: give one of \"token\" and \"token_sha256\"")),
    };
    Ok(hash)
}

/// The ids are checked again by the extension; here only so that a typo fails at start-up.
pub fn check_tenant(t: &Tenant) -> Result<(), String> {
    for (field, v) in [
        ("user_id", Some(&t.user_id)),
        ("agent_id", Some(&t.agent_id)),
        ("thread_id", t.thread_id.as_ref()),
    ] {
        if let Some(v) = v {
            if v.trim().is_empty() {
                return Err(format!("\"{field}\" is empty"));
            }
        }
    }
    if let Some(tools) = &t.tools {
        if tools.is_empty() {
            return Err("\"tools\" is empty: leave it out for the agent's default set".into());
        }
    }
    Ok(())
}

/// The command line: `stdio` with the tenant in flags (or the environment), `http` with a
/// configuration file, or `hash-token`.
#[derive(Debug, PartialEq)]
pub enum Command {
    Stdio {
        dsn: Option<String>,
        tenant: Tenant,
    },
    Http {
        config: String,
        dsn: Option<String>,
        listen: Option<String>,
    },
    HashToken(String),
    Help,
}

pub const USAGE: &str = "\
memory-mcp: memory_ext's agent tools over the Model Context Protocol.

  memory-mcp stdio --dsn DSN --user USER --agent AGENT [--thread THREAD] [--tools a,b,...]
  memory-mcp http  --config FILE [--dsn DSN] [--listen HOST:PORT]
  memory-mcp hash-token TOKEN    print the token_sha256 of TOKEN for the configuration file

DSN is a libpq connection string or URL for a role WITHOUT superuser or BYPASSRLS (memory-mcp
refuses such a role: row-level security is what keeps tenants apart). Environment instead of
flags: MEMORY_MCP_DSN, MEMORY_MCP_USER, MEMORY_MCP_AGENT, MEMORY_MCP_THREAD, MEMORY_MCP_TOOLS.
TLS to Postgres follows the DSN's sslmode; MEMORY_MCP_SSLROOTCERT=ca.pem verifies the server.
Reference: docs/mcp.md.";

/// Parses the arguments after the program name; `env` looks up the environment fallbacks.
pub fn parse_args(
    args: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Command, String> {
    let Some((cmd, rest)) = args.split_first() else {
        return Ok(Command::Help);
    };
    let mut flags: HashMap<&str, String> = HashMap::new();
    let mut positional = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if a == "-h" || a == "--help" {
            return Ok(Command::Help);
        }
        if let Some(name) = a.strip_prefix("--") {
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n, v.to_string()),
                None => (
                    name,
                    it.next()
                        .ok_or_else(|| format!("--{name} needs a value"))?
                        .clone(),
                ),
            };
            flags.insert(name, value);
        } else {
            positional.push(a.clone());
        }
    }
    let allowed: &[&str] = match cmd.as_str() {
        "stdio" => &["dsn", "user", "agent", "thread", "tools"],
        "http" => &["config", "dsn", "listen"],
        "hash-token" => &[],
        "help" | "-h" | "--help" => return Ok(Command::Help),
        other => return Err(format!("unknown command \"{other}\"\n\n{USAGE}")),
    };
    if let Some(bad) = flags.keys().find(|k| !allowed.contains(k)) {
        return Err(format!("{cmd}: unknown option --{bad}\n\n{USAGE}"));
    }
    let get = |flag: &str, var: &str| flags.get(flag).cloned().or_else(|| env(var));
    match cmd.as_str() {
        "stdio" => {
            let need = |flag: &str, var: &str| {
                get(flag, var).ok_or_else(|| format!("stdio: --{flag} (or {var}) is required"))
            };
            let tenant = Tenant {
                user_id: need("user", "MEMORY_MCP_USER")?,
                agent_id: need("agent", "MEMORY_MCP_AGENT")?,
                thread_id: get("thread", "MEMORY_MCP_THREAD"),
                tools: get("tools", "MEMORY_MCP_TOOLS").map(|t| {
                    t.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                }),
            };
            check_tenant(&tenant).map_err(|m| format!("stdio: {m}"))?;
            Ok(Command::Stdio {
                dsn: get("dsn", "MEMORY_MCP_DSN"),
                tenant,
            })
        }
        "http" => Ok(Command::Http {
            config: flags
                .get("config")
                .cloned()
                .ok_or("http: --config FILE is required")?,
            dsn: get("dsn", "MEMORY_MCP_DSN"),
            listen: flags.get("listen").cloned(),
        }),
        _ => match positional.as_slice() {
            [t] => Ok(Command::HashToken(t.clone())),
            _ => Err("hash-token: give exactly one TOKEN".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn stdio_flags_and_environment() {
        let c = parse_args(
            &args("stdio --user alice --agent=helper --tools memory_append,,archival_search"),
            |v| (v == "MEMORY_MCP_DSN").then(|| "host=h".to_string()),
        )
        .unwrap();
        assert_eq!(
            c,
            Command::Stdio {
                dsn: Some("host=h".into()),
                tenant: Tenant {
                    user_id: "alice".into(),
                    agent_id: "helper".into(),
                    thread_id: None,
                    tools: Some(vec!["memory_append".into(), "archival_search".into()]),
                }
            }
        );
        // The flag wins over the environment.
        let c = parse_args(&args("stdio --user a --agent b --dsn x"), |_| {
            Some("env".into())
        })
        .unwrap();
        assert!(matches!(c, Command::Stdio { dsn: Some(d), .. } if d == "x"));
    }

    #[test]
    fn argument_mistakes_are_named() {
        let none = |_: &str| None;
        assert!(parse_args(&args("stdio --agent b"), none)
            .unwrap_err()
            .contains("--user"));
        assert!(
            parse_args(&args("stdio --user a --agent b --bogus 1"), none)
                .unwrap_err()
                .contains("--bogus")
        );
        assert!(parse_args(&args("stdio --user"), none)
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse_args(&args("serve"), none)
            .unwrap_err()
            .contains("unknown command"));
        assert!(parse_args(&args("http"), none)
            .unwrap_err()
            .contains("--config"));
        assert!(
            parse_args(&args("stdio --user a --agent b --tools ,"), none)
                .unwrap_err()
                .contains("tools")
        );
        assert_eq!(parse_args(&[], none).unwrap(), Command::Help);
        assert_eq!(
            parse_args(&args("hash-token abc"), none).unwrap(),
            Command::HashToken("abc".into())
        );
    }

    #[test]
    fn tokens_map_to_tenants_by_hash() {
        let hashed = sha256_hex("bob-token-0123456789");
        let cfg = parse_http(&format!(
            r#"{{"tenants": [
                {{"token": "alice-token-0123456789", "user_id": "alice", "agent_id": "a"}},
                {{"token_sha256": "{}", "user_id": "bob", "agent_id": "b", "thread_id": "t"}}
            ]}}"#,
            hashed.to_uppercase()
        ))
        .unwrap();
        assert_eq!(cfg.listen, DEFAULT_LISTEN);
        assert_eq!(cfg.tokens.count(), 2);
        assert_eq!(
            cfg.tokens.tenant("alice-token-0123456789").unwrap().user_id,
            "alice"
        );
        let bob = cfg.tokens.tenant("bob-token-0123456789").unwrap();
        assert_eq!(
            (bob.user_id.as_str(), bob.thread_id.as_deref()),
            ("bob", Some("t"))
        );
        assert!(cfg.tokens.tenant("alice-token-012345678").is_none());
        assert!(cfg.tokens.tenant("").is_none());
    }

    #[test]
    fn configuration_mistakes_are_named() {
        let bad = |text: &str, want: &str| {
            let e = parse_http(text).unwrap_err();
            assert!(e.contains(want), "{e} should mention {want}");
        };
        bad(r#"{"tenants": []}"#, "empty");
        bad(
            r#"{"tenants": [{"token": "short", "user_id": "a", "agent_id": "b"}]}"#,
            "shorter",
        );
        bad(
            r#"{"tenants": [{"user_id": "a", "agent_id": "b"}]}"#,
            "one of",
        );
        bad(
            r#"{"tenants": [{"token_sha256": "abc", "user_id": "a", "agent_id": "b"}]}"#,
            "64 hexadecimal",
        );
        bad(
            r#"{"tenants": [{"token": "0123456789abcdef", "user_id": " ", "agent_id": "b"}]}"#,
            "tenants[0]: \"user_id\" is empty",
        );
        bad(
            r#"{"tenants": [{"token": "0123456789abcdef", "user_id": "a", "agent_id": "b"},
                            {"token": "0123456789abcdef", "user_id": "c", "agent_id": "d"}]}"#,
            "tenants[1]: the same token",
        );
        bad(
            r#"{"tenants": [{"token": "0123456789abcdef", "user": "a", "agent_id": "b"}]}"#,
            "unknown field",
        );
        bad(r#"{"tenant": []}"#, "unknown field");
        bad(
            r#"{"tenants": [{"token": " 0123456789abcdef ", "user_id": "a", "agent_id": "b"}]}"#,
            "spaces or line breaks around it",
        );
        bad(
            r#"{"limits": {"tenant_concurrency": 0}, "tenants": [{"token": "0123456789abcdef", "user_id": "a", "agent_id": "b"}]}"#,
            "limits.tenant_concurrency must be above 0",
        );
        bad(
            r#"{"limits": {"max_conns": 5}, "tenants": [{"token": "0123456789abcdef", "user_id": "a", "agent_id": "b"}]}"#,
            "unknown field",
        );
        bad(
            r#"{"allowed_origins": ["app.example.com"], "tenants": [{"token": "0123456789abcdef", "user_id": "a", "agent_id": "b"}]}"#,
            "not an origin",
        );
    }

    #[test]
    fn limits_default_and_override_one_by_one() {
        let cfg = parse_http(
            r#"{"limits": {"tenant_concurrency": 2, "queue_timeout_ms": 250},
                "tenants": [{"token": "0123456789abcdef", "user_id": "a", "agent_id": "b"}]}"#,
        )
        .unwrap();
        assert_eq!(cfg.limits.tenant_concurrency, 2);
        assert_eq!(cfg.limits.queue_timeout_ms, 250);
        assert_eq!(
            cfg.limits.header_timeout_ms,
            Limits::default().header_timeout_ms
        );
    }

    #[test]
    fn origins_from_loopback_or_the_list() {
        let allowed = vec!["https://app.example.com".to_string()];
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8443",
            "https://app.example.com",
        ] {
            assert!(origin_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "http://localhost.evil.example",
            "null",
            "https://app.example.com.evil",
        ] {
            assert!(!origin_allowed(bad, &allowed), "{bad}");
        }
    }
}
