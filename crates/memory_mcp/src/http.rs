//! Streamable HTTP: `POST /mcp` (stateless: no MCP session is kept, every request stands alone),
//! behind a bearer token that selects the tenant (src/config.rs), and `GET /healthz` for
//! readiness checks. A request without a known token never reaches the MCP service.

use crate::config::{HttpConfig, Tokens};
use crate::db::Db;
use crate::gateway::Gateway;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

async fn authenticate(State(tokens): State<Arc<Tokens>>, mut req: Request, next: Next) -> Response {
    let tenant = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|token| tokens.tenant(token.trim()))
        .cloned();
    match tenant {
        Some(t) => {
            req.extensions_mut().insert(t);
            next.run(req).await
        }
        None => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a known bearer token is required (Authorization: Bearer <token>)\n",
        )
            .into_response(),
    }
}

pub async fn serve(cfg: HttpConfig, db: Arc<Db>) -> Result<(), String> {
    let hosts: Vec<String> = LOOPBACK
        .iter()
        .map(|h| h.to_string())
        .chain(cfg.allowed_hosts.iter().cloned())
        .collect();
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(db.clone(), None)),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_allowed_hosts(hosts),
    );
    let tokens = Arc::new(cfg.tokens);
    let app = Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(tokens, authenticate))
        // After the layer: readiness needs no token.
        .route("/healthz", get(|| async { "ok\n" }));
    let listener = tokio::net::TcpListener::bind(&cfg.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("memory-mcp: streamable HTTP on http://{addr}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}
