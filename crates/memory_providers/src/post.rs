//! One bounded JSON POST, shared by the embedding clients (`embed::http`) and the LLM client
//! (`llm`): connect and overall timeouts, no redirects, HTTP errors returned as statuses, a capped
//! body. Callers map failures to their own errors and redact their own secrets.

use std::time::Duration;

/// Largest response body read, in bytes: 64 inputs x 3,072 dimensions as JSON is ~4 MB.
pub const MAX_BODY: u64 = 64 * 1024 * 1024;

/// What the server answered, whatever the status.
pub struct Reply {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: String,
}

/// Why there is no answer. Reasons are not redacted.
pub enum Failure {
    Timeout,
    Unreachable(String),
    Body(String),
}

/// An agent whose every call ends within `timeout_ms` (connect, and the whole exchange).
pub fn agent(timeout_ms: u64) -> ureq::Agent {
    let t = Some(Duration::from_millis(timeout_ms.max(1)));
    ureq::Agent::config_builder()
        .timeout_global(t)
        .timeout_connect(t)
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// POSTs `body` as JSON, with a bearer token when `api_key` is set and not empty.
pub fn json(
    agent: &ureq::Agent,
    url: &str,
    api_key: Option<&str>,
    body: &str,
) -> Result<Reply, Failure> {
    let mut req = agent.post(url).header("Content-Type", "application/json");
    if let Some(k) = api_key.filter(|k| !k.is_empty()) {
        req = req.header("Authorization", &format!("Bearer {k}"));
    }
    let mut resp = match req.send(body) {
        Ok(r) => r,
        Err(ureq::Error::Timeout(_)) => return Err(Failure::Timeout),
        Err(e) => return Err(Failure::Unreachable(e.to_string())),
    };
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match resp
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_string()
    {
        Ok(body) => Ok(Reply {
            status,
            retry_after,
            body,
        }),
        Err(ureq::Error::Timeout(_)) => Err(Failure::Timeout),
        Err(e) => Err(Failure::Body(e.to_string())),
    }
}
