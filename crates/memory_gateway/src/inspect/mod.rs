//! The memory inspector: browser pages at `/inspect/` where the people who run agents, and the
//! people those agents serve, see what is remembered and fix it (docs/inspector.md).
//!
//! # How it is kept safe
//! - A person logs in with a bearer token of the configuration file whose `inspect` is `read` or
//!   `read-write` (src/config.rs); the page keeps a random session id in an HttpOnly,
//!   SameSite=Strict cookie, never the token. Sessions live in this process's memory: a restart
//!   logs everyone out.
//! - Every change, logging out included, is a POST carrying the session's CSRF token in the
//!   form (refused with 403 without it) and, when the browser sends one, an Origin of this
//!   server (a loopback or `allowed_hosts` name: never compared with the Host the client sent)
//!   or an allowed origin. A read-only session gets no forms but the logout, and its POSTs are
//!   refused.
//! - Wrong tokens cost: an address with `LOGIN_FAILURES` failed logins in `LOGIN_WINDOW` is
//!   answered 429 until the window ends. One token holds at most `SESSIONS_PER_TOKEN`
//!   sessions: its own oldest goes, never another token's.
//! - Every page and action is one SQL statement (src/inspect/sql/) through the SQL API, acting
//!   for the token's tenant under row-level security, so another tenant's ids are not found
//!   (404) and history names the change's actor as `<role> (inspector: <token name>)`.
//! - Every value is escaped by the templates (src/inspect/views.rs); the Content-Security-Policy
//!   allows only this server's own script and style (assets/, embedded in the binary).

mod pages;
mod params;
mod views;

use crate::config::{Grant, Inspect, Tokens};
use crate::db::{Db, DbError};
use crate::metrics;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_postgres::types::ToSql;

pub const COOKIE: &str = "memory_inspect";
/// A session unused this long is gone.
const IDLE: Duration = Duration::from_secs(12 * 3600);
/// Sessions kept at most (all tokens); past it a login is refused (503) unless the token has a
/// session of its own to give up.
const MAX_SESSIONS: usize = 1000;
/// Sessions of one token at most: a browser or two per person sharing a token. Past it the
/// token's least recently used session goes, so that one token (a read-only one, say) cannot
/// push out the sessions of another.
const SESSIONS_PER_TOKEN: usize = 16;
/// Failed logins one client address may make in `LOGIN_WINDOW`: a person mistyping a token
/// stays well under it; guessing at 300 tokens a second does not get past it.
const LOGIN_FAILURES: u32 = 10;
const LOGIN_WINDOW: Duration = Duration::from_secs(60);
/// Addresses whose failures are remembered at most (the oldest windows go first).
const LOGIN_ADDRESSES: usize = 10_000;

/// One logged-in browser.
#[derive(Clone)]
pub struct Session {
    pub grant: Grant,
    pub csrf: String,
    last_used: Instant,
}

impl Session {
    pub fn can_write(&self) -> bool {
        self.grant.inspect == Inspect::ReadWrite
    }

    /// What history names as whom the gateway's role acted for.
    pub fn acting(&self) -> String {
        format!("inspector: {}", self.grant.name)
    }
}

pub struct Inspector {
    pub db: Arc<Db>,
    tokens: Arc<Tokens>,
    origins: Vec<String>,
    /// The names this server is reached by besides loopback (`allowed_hosts`).
    hosts: Vec<String>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Failed logins per client address: when the window began, how many.
    failures: Mutex<HashMap<std::net::IpAddr, (Instant, u32)>>,
}

/// Why a login was not given a session.
enum Refusal {
    /// The token is not known, or may not inspect.
    Unknown,
    /// Every session slot is taken by other tokens.
    Full,
}

/// 32 bytes from the kernel's generator, in hex: session ids and CSRF tokens.
fn random_hex() -> String {
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .expect("/dev/urandom must be readable");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Inspector {
    /// A new session for the token (typed into a form: the spaces a paste brings are not
    /// part of it). Over `SESSIONS_PER_TOKEN`, or with the table full, the token's own least
    /// recently used session goes.
    fn login(&self, token: &str) -> Result<(String, Session), Refusal> {
        let grant = self.tokens.grant(token.trim()).ok_or(Refusal::Unknown)?;
        if grant.inspect == Inspect::None {
            return Err(Refusal::Unknown);
        }
        let s = Session {
            grant: grant.clone(),
            csrf: random_hex(),
            last_used: Instant::now(),
        };
        let id = random_hex();
        let mut all = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|_, v| v.last_used.elapsed() < IDLE);
        let own = |all: &HashMap<String, Session>| -> (usize, Option<String>) {
            let mine = all.iter().filter(|(_, v)| v.grant.name == grant.name);
            let count = mine.clone().count();
            let oldest = mine
                .min_by_key(|(_, v)| v.last_used)
                .map(|(k, _)| k.clone());
            (count, oldest)
        };
        let (count, oldest) = own(&all);
        if count >= SESSIONS_PER_TOKEN || all.len() >= MAX_SESSIONS {
            match oldest {
                Some(k) => {
                    all.remove(&k);
                }
                None => return Err(Refusal::Full),
            }
        }
        all.insert(id.clone(), s.clone());
        Ok((id, s))
    }

    /// Whether `peer` has used up its failed logins; when so, the seconds until it may try.
    fn throttled(&self, peer: std::net::IpAddr) -> Option<u64> {
        let all = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let (began, n) = all.get(&peer)?;
        let left = LOGIN_WINDOW.checked_sub(began.elapsed())?;
        (*n >= LOGIN_FAILURES).then(|| left.as_secs().max(1))
    }

    fn failed(&self, peer: std::net::IpAddr) {
        let mut all = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if all.len() >= LOGIN_ADDRESSES {
            all.retain(|_, (began, _)| began.elapsed() < LOGIN_WINDOW);
            while all.len() >= LOGIN_ADDRESSES {
                let Some(oldest) = all.iter().min_by_key(|(_, (b, _))| *b).map(|(k, _)| *k) else {
                    break;
                };
                all.remove(&oldest);
            }
        }
        let e = all.entry(peer).or_insert((Instant::now(), 0));
        if e.0.elapsed() >= LOGIN_WINDOW {
            *e = (Instant::now(), 0);
        }
        e.1 += 1;
    }

    fn session(&self, headers: &HeaderMap) -> Option<(String, Session)> {
        let id = cookie(headers, COOKIE)?;
        let mut all = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let s = all.get_mut(&id)?;
        if s.last_used.elapsed() >= IDLE {
            all.remove(&id);
            return None;
        }
        s.last_used = Instant::now();
        Some((id, s.clone()))
    }

    fn logout(&self, id: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Runs one of src/inspect/sql/ for the session's tenant: `$1` is the tenant, the text
    /// `params` follow.
    pub async fn sql(
        &self,
        s: &Session,
        sql: &str,
        params: &[Option<String>],
    ) -> Result<Option<serde_json::Value>, DbError> {
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        self.sql_with(s, sql, &refs).await
    }

    /// [`Inspector::sql`] with parameters of any type after the tenant.
    pub async fn sql_with(
        &self,
        s: &Session,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<serde_json::Value>, DbError> {
        let mut all: Vec<&(dyn ToSql + Sync)> = vec![&s.grant.tenant.user_id];
        all.extend_from_slice(params);
        self.db
            .json(&s.grant.tenant.user_id, &s.acting(), sql, &all)
            .await
    }
}

/// The value of cookie `name` in the request's Cookie headers.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// The headers every inspector response carries: only this server's assets may run or style
/// the page, no framing, no caching of a tenant's memory, no referrer leaking ids to other sites (same-origin: with no-referrer a browser sends `Origin: null` on the forms' POSTs).
fn harden(r: &mut Response) {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// What every page and action goes through: a session (else the login page), for a POST the
/// write permission, an acceptable Origin and the CSRF token; then the server time is measured
/// (the `Server-Timing` header and the metrics).
async fn gate(State(app): State<Arc<Inspector>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let page = page_name(req.uri().path());
    let is_post = req.method() == Method::POST;
    let mut r = match app.session(req.headers()) {
        None => {
            if is_post {
                metrics::global().inc("memory_mcp_auth_failures_total", &[("surface", "inspect")]);
                views::error_page(StatusCode::UNAUTHORIZED, "Log in first.", None)
            } else {
                // Back to the login page, which comes back here afterwards.
                let to = req
                    .uri()
                    .path_and_query()
                    .map(|p| p.as_str().to_string())
                    .unwrap_or_default();
                let mut r = StatusCode::SEE_OTHER.into_response();
                r.headers_mut().insert(
                    header::LOCATION,
                    HeaderValue::from_str(&format!(
                        "/inspect/login?next={}",
                        params::urlencode(&to)
                    ))
                    .unwrap_or(HeaderValue::from_static("/inspect/login")),
                );
                r
            }
        }
        Some((_, s)) if is_post && !s.can_write() => views::error_page(
            StatusCode::FORBIDDEN,
            "This token may look, not change: its configuration says \"inspect\": \"read\".",
            Some(&s),
        ),
        Some((_, s)) if is_post && !origin_ok(&app, req.headers()) => views::error_page(
            StatusCode::FORBIDDEN,
            "This change came from a page of another site.",
            Some(&s),
        ),
        Some((_, s)) => {
            if let Some(c) = req.extensions().get::<crate::http::Connection>() {
                c.authenticate();
            }
            let mut req = req;
            if is_post {
                // The form's CSRF token, checked before the handler sees the form.
                let (parts, body) = req.into_parts();
                let bytes = match axum::body::to_bytes(body, 4 * 1024 * 1024).await {
                    Ok(b) => b,
                    Err(_) => {
                        return views::error_page(
                            StatusCode::PAYLOAD_TOO_LARGE,
                            "The form is over 4 MiB.",
                            Some(&s),
                        )
                    }
                };
                if !csrf_ok(&bytes, &s) {
                    return csrf_refused(&s);
                }
                req = Request::from_parts(parts, axum::body::Body::from(bytes));
            }
            req.extensions_mut().insert(s);
            next.run(req).await
        }
    };
    let took = started.elapsed();
    let status = r.status().as_u16().to_string();
    metrics::global().inc(
        "memory_mcp_inspect_requests_total",
        &[("page", page), ("status", &status)],
    );
    metrics::global().observe(
        "memory_mcp_inspect_duration_seconds",
        &[("page", page)],
        took,
    );
    if let Ok(v) = HeaderValue::from_str(&format!("app;dur={:.1}", took.as_secs_f64() * 1000.0)) {
        r.headers_mut().insert("server-timing", v);
    }
    harden(&mut r);
    r
}

/// A page's name for the metrics: the path's first segment (ids are not labels).
fn page_name(path: &str) -> &'static str {
    let rest = path.trim_start_matches("/inspect").trim_start_matches('/');
    match rest.split('/').next().unwrap_or("") {
        "" => "overview",
        "memories" => "memories",
        "blocks" => "blocks",
        "threads" => "threads",
        "files" => "files",
        "proposals" => "proposals",
        "summaries" => "summaries",
        "webhooks" => "webhooks",
        "export" => "export",
        "logout" => "logout",
        _ => "other",
    }
}

/// A POST's Origin, when the browser sends one, must be this server or an allowed origin
/// (config.rs `origin_allowed`: loopback and `allowed_origins`). "This server" is a name of the
/// configuration (`allowed_hosts`), never the request's Host: a page that made the browser
/// send a Host of its choosing (DNS rebinding) would otherwise pass as this server.
fn origin_ok(app: &Inspector, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let ours = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(|authority| crate::http::host_allowed(authority, &app.hosts));
    ours || crate::config::origin_allowed(origin, &app.origins)
}

/// Whether a form carries the session's CSRF token.
fn csrf_ok(form: &[u8], s: &Session) -> bool {
    form_field(form, "csrf").as_deref() == Some(s.csrf.as_str())
}

/// The answer to a change without the session's CSRF token (or from another site's page).
fn csrf_refused(s: &Session) -> Response {
    metrics::global().inc("memory_mcp_errors_total", &[("kind", "inspect_csrf")]);
    let mut r = views::error_page(
        StatusCode::FORBIDDEN,
        "The form's CSRF token is missing or wrong: reload the page and try again.",
        Some(s),
    );
    harden(&mut r);
    r
}

/// The first value of `name` in an urlencoded form.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// The login page and its POST: outside the gate.
async fn login_page(
    State(_app): State<Arc<Inspector>>,
    axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>,
) -> Response {
    let mut r = views::login(q.get("next").map(String::as_str), None, StatusCode::OK);
    harden(&mut r);
    r
}

async fn login_post(State(app): State<Arc<Inspector>>, req: Request) -> Response {
    let connection = req.extensions().get::<crate::http::Connection>().cloned();
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    // The edge (src/http.rs) has read the body within the limits already.
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let token = form_field(&body, "token").unwrap_or_default();
    let next = form_field(&body, "next").filter(|n| params::local_path(n));
    let peer = connection.as_ref().map(|c| c.peer);
    let wait = peer.and_then(|p| app.throttled(p));
    let mut r = if let Some(secs) = wait {
        metrics::global().inc(
            "memory_mcp_errors_total",
            &[("kind", "inspect_login_throttled")],
        );
        let mut r = views::login(
            next.as_deref(),
            Some("Too many wrong tokens from this address: wait a minute, then try again."),
            StatusCode::TOO_MANY_REQUESTS,
        );
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        r
    } else if !origin_ok(&app, &headers) {
        views::login(
            next.as_deref(),
            Some("This login came from a page of another site."),
            StatusCode::FORBIDDEN,
        )
    } else {
        match app.login(&token) {
            Err(Refusal::Unknown) => {
                metrics::global().inc("memory_mcp_auth_failures_total", &[("surface", "inspect")]);
                if let Some(p) = peer {
                    app.failed(p);
                }
                views::login(
                    next.as_deref(),
                    Some("That token is not known, or it may not open the inspector."),
                    StatusCode::UNAUTHORIZED,
                )
            }
            Err(Refusal::Full) => views::login(
                next.as_deref(),
                Some("The inspector has as many sessions as it keeps: try again later."),
                StatusCode::SERVICE_UNAVAILABLE,
            ),
            Ok((id, _)) => {
                if let Some(c) = &connection {
                    c.authenticate();
                }
                let secure = headers
                    .get("x-forwarded-proto")
                    .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
                let cookie = format!(
                    "{COOKIE}={id}; Path=/inspect; HttpOnly; SameSite=Strict; Max-Age={}{}",
                    IDLE.as_secs(),
                    if secure { "; Secure" } else { "" }
                );
                let mut r = StatusCode::SEE_OTHER.into_response();
                let to = next.unwrap_or_else(|| "/inspect/".into());
                r.headers_mut().insert(
                    header::LOCATION,
                    HeaderValue::from_str(&to).unwrap_or(HeaderValue::from_static("/inspect/")),
                );
                if let Ok(v) = HeaderValue::from_str(&cookie) {
                    r.headers_mut().insert(header::SET_COOKIE, v);
                }
                r
            }
        }
    };
    harden(&mut r);
    r
}

/// Logging out is a change like any other: the session's CSRF token and an acceptable Origin,
/// else a page of another site could log a person out.
async fn logout(
    State(app): State<Arc<Inspector>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Some((id, s)) = app.session(&headers) {
        if !csrf_ok(&body, &s) || !origin_ok(&app, &headers) {
            return csrf_refused(&s);
        }
        app.logout(&id);
    }
    let mut r = StatusCode::SEE_OTHER.into_response();
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/inspect/login"));
    r.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static(
            "memory_inspect=; Path=/inspect; HttpOnly; SameSite=Strict; Max-Age=0",
        ),
    );
    r
}

/// The stylesheet and script, compiled into the binary: the pages work offline, from no CDN.
async fn asset(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    let (body, kind): (&'static str, &'static str) = match name.as_str() {
        "inspect.css" => (
            include_str!("../../assets/inspect.css"),
            "text/css; charset=utf-8",
        ),
        "inspect.js" => (
            include_str!("../../assets/inspect.js"),
            "text/javascript; charset=utf-8",
        ),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let mut r = ([(header::CONTENT_TYPE, kind)], body).into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=3600"),
    );
    harden(&mut r);
    r
}

pub fn router(
    db: Arc<Db>,
    tokens: Arc<Tokens>,
    origins: Vec<String>,
    hosts: Vec<String>,
) -> Router {
    let app = Arc::new(Inspector {
        db,
        tokens,
        origins,
        hosts,
        sessions: Mutex::new(HashMap::new()),
        failures: Mutex::new(HashMap::new()),
    });
    let gated = Router::new()
        .route("/inspect/", get(pages::overview))
        .route("/inspect/memories", get(pages::memories))
        .route("/inspect/memories/{id}", get(pages::memory))
        .route(
            "/inspect/memories/{id}/{action}",
            post(pages::memory_action),
        )
        .route("/inspect/blocks", get(pages::agents))
        .route("/inspect/blocks/{agent}", get(pages::blocks))
        .route(
            "/inspect/blocks/{agent}/{label}",
            get(pages::block_history).post(pages::block_edit),
        )
        .route("/inspect/threads", get(pages::threads))
        .route("/inspect/threads/{thread}", get(pages::thread))
        .route("/inspect/files", get(pages::files))
        .route("/inspect/files/view", get(pages::file))
        .route("/inspect/proposals", get(pages::proposals))
        .route("/inspect/proposals/{id}/{decision}", post(pages::decide))
        .route("/inspect/summaries", get(pages::summaries))
        .route("/inspect/summaries/{name}", get(pages::summary))
        .route("/inspect/webhooks", get(pages::webhooks))
        .route("/inspect/export", get(pages::export_page))
        .route("/inspect/export/download", get(pages::export))
        // route_layer: only these routes; a path no route has is a plain 404, not a login.
        .route_layer(middleware::from_fn_with_state(app.clone(), gate));
    Router::new()
        .route(
            "/inspect",
            get(|| async { axum::response::Redirect::permanent("/inspect/") }),
        )
        .route("/inspect/login", get(login_page).post(login_post))
        .route("/inspect/logout", post(logout))
        .route("/inspect/assets/{name}", get(asset))
        .merge(gated)
        .with_state(app)
}

/// A refusal of the SQL API shown as a page: not found (P0002, and the NULL of a query that
/// found nothing) is 404, a refused value 400/409/403, an unreachable database 503.
pub fn db_error(e: &DbError, s: &Session) -> Response {
    match e {
        DbError::Sql { code, message } => {
            let status = match code.as_str() {
                "P0002" | "22P02" => StatusCode::NOT_FOUND,
                "42501" => StatusCode::FORBIDDEN,
                "57014" => StatusCode::GATEWAY_TIMEOUT,
                _ => StatusCode::BAD_REQUEST,
            };
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "inspect_sql")]);
            views::error_page(status, &format!("{message} (SQLSTATE {code})"), Some(s))
        }
        DbError::Unavailable(m) => {
            metrics::global().inc("memory_mcp_errors_total", &[("kind", "unavailable")]);
            views::error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("The database is unavailable: {m}"),
                Some(s),
            )
        }
    }
}
