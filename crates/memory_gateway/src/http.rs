//! Streamable HTTP: `POST /mcp` (stateless: no MCP session is kept, every request stands alone),
//! behind a bearer token that selects the tenant (src/config.rs), `GET /healthz` for readiness
//! checks, the memory inspector at `/inspect/` (src/inspect/: its own login and session cookie)
//! and `GET /metrics` (src/metrics.rs: its own token, here or on an address of its own). A
//! request without a known token never reaches the MCP service.
//!
//! # Why our own accept loop
//! The server faces clients it does not control, so every resource a client can hold is
//! bounded (config.rs `Limits`): connections (all, and those not yet authenticated), the time
//! to send headers (which also ends idle keep-alive connections) and a body, the body's size
//! (refused from its Content-Length, or as it streams in, before it is buffered), each tenant's
//! calls at once (a fair queue, then 429 with Retry-After), and each call's SQL
//! (statement_timeout, src/db.rs). The headers' and body's times and the body's cap hold on
//! every route (`edge`), and a connection that has not authenticated (a known bearer token, an
//! inspector session or login, the metrics token) within the two times together is closed,
//! whatever it is doing: a client that sends a body a byte at a time cannot keep an
//! unauthenticated slot. Every route but `/healthz` also needs a Host of the allow-list
//! (loopback and `allowed_hosts`), which stops DNS rebinding. `axum::serve` sets no header
//! timeout and no connection cap, so connections are served here with hyper's HTTP/1 builder,
//! which has both. On SIGINT or
//! SIGTERM the server stops accepting, asks every connection to finish, and after
//! `shutdown_grace_ms` drops what is left: an idle or half-sent connection cannot hold it up.
//!
//! What reaches rmcp's MCP service has been checked as JSON-RPC first, so that protocol
//! mistakes get the JSON-RPC errors the specification gives: an unparseable body -32700, a batch
//! -32600 (MCP 2025-06-18 removed batching), malformed `tools/call` parameters -32602.

use crate::config::{self, HttpConfig, Limits, MetricsConfig, Tenant, Tokens};
use crate::db::Db;
use crate::gateway::Gateway;
use crate::metrics;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use http_body_util::{BodyExt, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tower::ServiceExt;

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// What every request of the server shares.
struct Shared {
    tokens: Arc<Tokens>,
    origins: Vec<String>,
    limits: Limits,
    /// Connections that have not yet sent a request with a known token.
    unauthenticated: Arc<AtomicUsize>,
    /// Each tenant's turns (its `user_id`): `tenant_concurrency` permits, handed out in the
    /// order calls ask (tokio's semaphore is first-in, first-out).
    turns: HashMap<String, Arc<Semaphore>>,
}

/// One connection's state, put in each of its requests: whether it has authenticated, and the
/// client's address (the inspector's login limit is per address).
#[derive(Clone)]
pub(crate) struct Connection {
    authenticated: Arc<AtomicBool>,
    unauthenticated: Arc<AtomicUsize>,
    pub peer: std::net::IpAddr,
}

impl Connection {
    /// The connection has shown a credential: it leaves the unauthenticated count and its
    /// deadline.
    pub fn authenticate(&self) {
        if !self.authenticated.swap(true, Ordering::SeqCst) {
            self.unauthenticated.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The host part of a Host header (`name`, `name:port`, `[v6]:port`), lowercased.
fn host_name(host: &str) -> String {
    let h = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    h.to_ascii_lowercase()
}

/// Whether a Host header names this server: one of `hosts` (loopback and `allowed_hosts`).
pub(crate) fn host_allowed(host: &str, hosts: &[String]) -> bool {
    let name = host_name(host);
    !name.is_empty() && hosts.iter().any(|h| h.eq_ignore_ascii_case(&name))
}

/// What every route shares, in front of everything: the limits and the Host allow-list.
struct Edge {
    limits: Limits,
    hosts: Vec<String>,
}

/// In front of every route: one Host header, of the allow-list (but `/healthz`, which load
/// balancers probe by address); then, but for `/mcp` (whose guard reads its body after the
/// tenant's turn), the body within `max_body_bytes` and `body_timeout_ms`.
async fn edge(State(e): State<Arc<Edge>>, req: Request, next: Next) -> Response {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let (host, more) = (hosts.next(), hosts.next().is_some());
    if more {
        return refused(StatusCode::BAD_REQUEST, "more than one Host header");
    }
    let path = req.uri().path();
    if path != "/healthz" {
        let ok = host
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| host_allowed(h, &e.hosts));
        if !ok {
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "forbidden_host")]);
            return (
                StatusCode::FORBIDDEN,
                "this Host is not one of the server's (allowed_hosts)\n",
            )
                .into_response();
        }
    }
    if path == "/mcp" || path.starts_with("/mcp/") {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    match read_body(&parts, body, &e.limits).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(r) => r,
    }
}

/// A request's body, within the cap (refused from its Content-Length, or as it streams in) and
/// the time; the refusal otherwise (413, 408, 400).
async fn read_body(
    parts: &http::request::Parts,
    body: Body,
    limits: &Limits,
) -> Result<axum::body::Bytes, Response> {
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes) {
        metrics::global().inc("memory_mcp_errors_total", &[("kind", "body_too_large")]);
        return Err(too_large(limits));
    }
    let read = Limited::new(body, limits.max_body_bytes).collect();
    match tokio::time::timeout(Duration::from_millis(limits.body_timeout_ms), read).await {
        Err(_) => {
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "body_timeout")]);
            Err(refused(
                StatusCode::REQUEST_TIMEOUT,
                "the request body was not sent in time",
            ))
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "body_too_large")]);
            Err(too_large(limits))
        }
        Ok(Err(_)) => Err(refused(
            StatusCode::BAD_REQUEST,
            "the request body could not be read",
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// The token of an `Authorization: Bearer <token>` header, exactly as sent: a token with
/// spaces around it is not the token (the configuration file refuses such tokens too).
pub(crate) fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// A JSON-RPC error response (HTTP `status`), for what is refused before the MCP service.
fn rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn refused(status: StatusCode, message: &str) -> Response {
    rpc_error(status, Value::Null, -32600, message)
}

/// The checks in front of the MCP service, in order: one Host header, an allowed Origin, a
/// known bearer token, the tenant's turn, then the body (size, time, JSON-RPC shape).
async fn guard(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    if req.headers().get_all(header::HOST).iter().count() > 1 {
        return refused(StatusCode::BAD_REQUEST, "more than one Host header");
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .is_ok_and(|o| config::origin_allowed(o, &shared.origins));
        if !ok {
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "forbidden_origin")]);
            return refused(StatusCode::FORBIDDEN, "this Origin may not call the server");
        }
    }
    let tenant: Option<Tenant> = bearer(req.headers())
        .and_then(|token| shared.tokens.tenant(token))
        .cloned();
    let Some(tenant) = tenant else {
        metrics::global().inc("memory_mcp_auth_failures_total", &[("surface", "mcp")]);
        metrics::global().inc("memory_mcp_errors_total", &[("kind", "unauthorized")]);
        let mut r = refused(
            StatusCode::UNAUTHORIZED,
            "a known bearer token is required (Authorization: Bearer <token>)",
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return r;
    };
    if let Some(c) = req.extensions().get::<Connection>() {
        c.authenticate();
    }
    let limits = &shared.limits;
    // The tenant's turn, before the body is read: a tenant over its share holds no buffer.
    let Some(turns) = shared.turns.get(&tenant.user_id) else {
        return refused(StatusCode::INTERNAL_SERVER_ERROR, "tenant without a queue");
    };
    let wait = Duration::from_millis(limits.queue_timeout_ms);
    let _turn = match tokio::time::timeout(wait, turns.clone().acquire_owned()).await {
        Ok(Ok(permit)) => permit,
        _ => {
            metrics::global().inc("memory_mcp_throttled_total", &[("tenant", &tenant.user_id)]);
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "throttled")]);
            let mut r = refused(
                StatusCode::TOO_MANY_REQUESTS,
                "too many calls of this tenant at once: retry after a second",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return r;
        }
    };
    let (mut parts, body) = req.into_parts();
    parts.extensions.insert(tenant);
    let bytes = match read_body(&parts, body, limits).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut labels = ("other", "");
    if parts.method == http::Method::POST {
        match check_rpc(&bytes) {
            Ok(msg) => labels = rpc_labels(&msg),
            Err(refusal) => {
                metrics::global().inc("memory_mcp_errors_total", &[("kind", "invalid_request")]);
                return refusal;
            }
        }
    }
    let started = std::time::Instant::now();
    let r = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let l = [("method", labels.0), ("tool", labels.1)];
    metrics::global().inc("memory_mcp_requests_total", &l);
    metrics::global().observe("memory_mcp_request_duration_seconds", &l, started.elapsed());
    r
}

/// The MCP methods metrics name; any other is counted as `other`, so that a client cannot
/// make up label values without end.
const METHODS: [&str; 12] = [
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "server/discover",
    "notifications/cancelled",
];

/// A checked message's method and, for `tools/call`, its tool (a known tool's name, else
/// `unknown`).
fn rpc_labels(msg: &Value) -> (&'static str, &'static str) {
    let method = msg["method"].as_str().unwrap_or("");
    let method = METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other");
    let tool = if method == "tools/call" {
        let name = msg["params"]["name"].as_str().unwrap_or("");
        memory_core::tools::ALL_TOOLS
            .iter()
            .find(|t| **t == name)
            .copied()
            .unwrap_or("unknown")
    } else {
        ""
    };
    (method, tool)
}

fn too_large(limits: &Limits) -> Response {
    refused(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!(
            "the request body is over {} bytes (limits.max_body_bytes)",
            limits.max_body_bytes
        ),
    )
}

/// The JSON-RPC errors of a POSTed message that rmcp would answer otherwise (an HTTP 4xx with
/// no JSON-RPC body), or the parsed message when it may go on.
// The refusal is the request's answer, returned at once: boxing it would only add an allocation.
#[allow(clippy::result_large_err)]
fn check_rpc(body: &[u8]) -> Result<Value, Response> {
    let msg: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                &format!("Parse error: {e}"),
            ))
        }
    };
    let Some(obj) = msg.as_object() else {
        let why = if msg.is_array() {
            "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18); send one message per request"
        } else {
            "Invalid Request: a JSON-RPC message is an object"
        };
        return Err(rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32600, why));
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            -32600,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    if obj.get("method").and_then(Value::as_str) == Some("tools/call") {
        let params = obj.get("params");
        let why = match params {
            Some(Value::Object(p)) => match (p.get("name"), p.get("arguments")) {
                (Some(Value::String(_)), None | Some(Value::Object(_)) | Some(Value::Null)) => None,
                (Some(Value::String(_)), Some(_)) => Some("\"arguments\" must be an object"),
                _ => Some("\"name\" must be the tool's name, a string"),
            },
            _ => Some("tools/call needs params {\"name\", \"arguments\"}"),
        };
        if let Some(why) = why {
            return Err(rpc_error(
                StatusCode::OK,
                id,
                -32602,
                &format!("Invalid params: {why}"),
            ));
        }
    }
    Ok(msg)
}

/// `GET /metrics`: the exposition, for a request bearing the metrics token.
async fn scrape(
    State((m, db)): State<(MetricsConfig, Arc<Db>)>,
    connection: Option<axum::Extension<Connection>>,
    headers: http::HeaderMap,
) -> Response {
    let known = bearer(&headers).is_some_and(|t| config::sha256_hex(t) == m.token_sha256);
    if let (true, Some(axum::Extension(c))) = (known, connection) {
        c.authenticate();
    }
    if !known {
        metrics::global().inc("memory_mcp_auth_failures_total", &[("surface", "metrics")]);
        let mut r = (
            StatusCode::UNAUTHORIZED,
            "the metrics token is required (Authorization: Bearer <token>)\n",
        )
            .into_response();
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return r;
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics::global().render(&db.pool_state()),
    )
        .into_response()
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

pub async fn serve(cfg: HttpConfig, db: Arc<Db>) -> Result<(), String> {
    let hosts: Vec<String> = LOOPBACK
        .iter()
        .map(|h| h.to_string())
        .chain(cfg.allowed_hosts.iter().cloned())
        .collect();
    let mcp_db = db.clone();
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(mcp_db.clone(), None)),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_allowed_hosts(hosts.clone()),
    );
    let limits = cfg.limits.clone();
    let tokens = Arc::new(cfg.tokens);
    let turns = tokens
        .tenants()
        .into_iter()
        .map(|t| {
            (
                t.user_id.clone(),
                Arc::new(Semaphore::new(limits.tenant_concurrency)),
            )
        })
        .collect();
    let shared = Arc::new(Shared {
        tokens: tokens.clone(),
        origins: cfg.allowed_origins.clone(),
        limits: limits.clone(),
        unauthenticated: Arc::new(AtomicUsize::new(0)),
        turns,
    });
    let edge_state = Arc::new(Edge {
        limits: limits.clone(),
        hosts: hosts.clone(),
    });
    let metrics_here = cfg.metrics.as_ref().filter(|m| m.listen.is_none()).cloned();
    let mut app = Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        // After the layer: readiness needs no token, the inspector and the metrics have their own.
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(crate::inspect::router(
            db.clone(),
            tokens.clone(),
            cfg.allowed_origins.clone(),
            cfg.allowed_hosts.clone(),
        ));
    if let Some(m) = metrics_here {
        app = app.route("/metrics", get(scrape).with_state((m, db.clone())));
    }
    // Outermost: every route, before any of its own checks.
    let app = app.layer(middleware::from_fn_with_state(edge_state, edge));
    if let Some(m) = cfg.metrics.clone().filter(|m| m.listen.is_some()) {
        let addr = m.listen.clone().unwrap_or_default();
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("metrics: cannot listen on {addr}: {e}"))?;
        eprintln!(
            "memory-mcp: metrics on http://{}/metrics",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let edge_state = Arc::new(Edge {
            limits: limits.clone(),
            hosts: hosts.clone(),
        });
        let router = Router::new()
            .route("/metrics", get(scrape).with_state((m, db.clone())))
            .layer(middleware::from_fn_with_state(edge_state, edge));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
    }
    let listener = tokio::net::TcpListener::bind(&cfg.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("memory-mcp: streamable HTTP on http://{addr}/mcp");

    let open = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors and the like: wait a moment, as axum::serve does.
                Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue; }
            },
        };
        // Over a cap, the connection is closed before anything is read from it.
        let Ok(slot) = open.clone().try_acquire_owned() else {
            continue;
        };
        if shared.unauthenticated.fetch_add(1, Ordering::SeqCst) >= limits.max_unauthenticated {
            shared.unauthenticated.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let authenticated = Arc::new(AtomicBool::new(false));
        let (app, shared, mut stop_rx) = (app.clone(), shared.clone(), stop_rx.clone());
        let header_timeout = Duration::from_millis(limits.header_timeout_ms);
        // An unauthenticated connection gets the time to send one request's headers and body.
        let unauthenticated_life = header_timeout + Duration::from_millis(limits.body_timeout_ms);
        connections.spawn(async move {
            let seen = Connection {
                authenticated: authenticated.clone(),
                unauthenticated: shared.unauthenticated.clone(),
                peer: peer.ip(),
            };
            let svc = hyper::service::service_fn(
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(seen.clone());
                    app.clone().oneshot(req.map(Body::new))
                },
            );
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = builder.serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            let deadline = tokio::time::sleep(unauthenticated_life);
            tokio::pin!(deadline);
            let mut watched = true;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    _ = &mut deadline, if watched => {
                        if authenticated.load(Ordering::SeqCst) {
                            watched = false;
                        } else {
                            // Dropping the connection closes it, mid-request or not.
                            metrics::global().inc("memory_mcp_errors_total", &[("kind", "unauthenticated_timeout")]);
                            break;
                        }
                    }
                    _ = stop_rx.changed() => {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.as_mut().await;
                        break;
                    }
                }
            }
            if !authenticated.load(Ordering::SeqCst) {
                shared.unauthenticated.fetch_sub(1, Ordering::SeqCst);
            }
            drop(slot);
        });
    }
    eprintln!(
        "memory-mcp: stopping ({} connections open)",
        connections.len()
    );
    let _ = stop_tx.send(true);
    let grace = Duration::from_millis(limits.shutdown_grace_ms);
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        eprintln!(
            "memory-mcp: {} connections still open after {} ms, closed",
            connections.len(),
            limits.shutdown_grace_ms
        );
        connections.abort_all();
    }
    Ok(())
}
