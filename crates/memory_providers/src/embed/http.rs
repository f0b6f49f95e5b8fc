//! HTTP embedding providers: any OpenAI-compatible `POST <url>/embeddings` (OpenAI, vLLM, TEI,
//! LM Studio) and Ollama's `POST <url>/api/embed`.
//!
//! # Failure policy
//! A write path waits on this, so every call is bounded: one connect timeout and one overall
//! timeout per attempt (`timeout_ms`), at most [`HttpConfig::max_retries`] retries, and retries
//! only where waiting can help (429 and 5xx), with exponential backoff that honours a short
//! `Retry-After`. An unreachable endpoint, a timeout, a 4xx or a malformed answer fails at once:
//! the caller stores the row without a vector and the backfill tries again later.

use super::EmbedError;
use crate::post::{self, Failure};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST <url>/embeddings`, body `{"model", "input": [...]}`, answer `{"data": [{"embedding", "index"}]}`.
    OpenAi,
    /// `POST <url>/api/embed`, body `{"model", "input": [...]}`, answer `{"embeddings": [[...]]}`.
    Ollama,
}

#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub api: Api,
    /// Base URL: ending in `/v1` for OpenAI-compatible servers, the server root for Ollama.
    pub url: String,
    pub model: String,
    /// Expected dimensions; 0 = accept what the first vector has (all must agree).
    pub dims: usize,
    pub api_key: Option<String>,
    /// Per attempt, connect + send + receive.
    pub timeout_ms: u64,
    /// Retries after the first attempt, for 429 and 5xx only.
    pub max_retries: u32,
    /// Inputs per request.
    pub batch: usize,
}

/// First backoff; doubled per retry (100, 200, 400 ms ...).
pub const BACKOFF_MS: u64 = 100;
/// Longest wait between attempts, whatever Retry-After says: a write is waiting.
pub const MAX_BACKOFF_MS: u64 = 2_000;

impl HttpConfig {
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        match self.api {
            Api::OpenAi => format!("{base}/embeddings"),
            Api::Ollama => format!("{base}/api/embed"),
        }
    }

    /// Removes the API key from text a server sent back (a misconfigured proxy may echo headers).
    fn redact(&self, s: &str) -> String {
        match &self.api_key {
            Some(k) if !k.is_empty() => s.replace(k.as_str(), "[redacted]"),
            _ => s.to_string(),
        }
    }
}

pub fn request_body(api: Api, model: &str, inputs: &[&str]) -> Value {
    match api {
        Api::OpenAi => json!({ "model": model, "input": inputs, "encoding_format": "float" }),
        Api::Ollama => json!({ "model": model, "input": inputs }),
    }
}

#[derive(Deserialize)]
struct OpenAiItem {
    embedding: Vec<f32>,
    index: Option<usize>,
}
#[derive(Deserialize)]
struct OpenAiAnswer {
    data: Vec<OpenAiItem>,
}
#[derive(Deserialize)]
struct OllamaAnswer {
    embeddings: Vec<Vec<f32>>,
}

/// Parses and checks an answer: one vector per input, in input order, all with the expected
/// number of dimensions.
pub fn parse_answer(
    cfg: &HttpConfig,
    body: &str,
    expected: usize,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let url = cfg.endpoint();
    let malformed = |reason: String| EmbedError::Malformed {
        url: url.clone(),
        reason: cfg.redact(&reason),
    };
    let vectors = match cfg.api {
        Api::OpenAi => {
            let mut a: OpenAiAnswer =
                serde_json::from_str(body).map_err(|e| malformed(e.to_string()))?;
            if a.data.iter().all(|d| d.index.is_some()) {
                a.data.sort_by_key(|d| d.index);
            }
            a.data.into_iter().map(|d| d.embedding).collect::<Vec<_>>()
        }
        Api::Ollama => {
            let a: OllamaAnswer =
                serde_json::from_str(body).map_err(|e| malformed(e.to_string()))?;
            a.embeddings
        }
    };
    if vectors.len() != expected {
        return Err(EmbedError::Count {
            url,
            expected,
            got: vectors.len(),
        });
    }
    let want = if cfg.dims > 0 {
        cfg.dims
    } else {
        vectors.first().map_or(0, Vec::len)
    };
    for v in &vectors {
        if v.len() != want || v.is_empty() {
            return Err(EmbedError::Dimensions {
                expected: want,
                got: v.len(),
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(malformed("a vector holds NaN or infinity".into()));
        }
    }
    Ok(vectors)
}

/// Whether a failed attempt is worth another try, and after how long.
pub fn retry_after(
    status: u16,
    retry_after_header: Option<&str>,
    attempt: u32,
) -> Option<Duration> {
    if status != 429 && !(500..=599).contains(&status) {
        return None;
    }
    let backoff = BACKOFF_MS.saturating_mul(1 << attempt.min(10));
    let asked = retry_after_header
        .and_then(|h| h.trim().parse::<u64>().ok())
        .map(|s| s.saturating_mul(1000));
    Some(Duration::from_millis(
        asked.unwrap_or(backoff).clamp(1, MAX_BACKOFF_MS),
    ))
}

/// Embeds `inputs` through the endpoint, [`HttpConfig::batch`] at a time.
pub fn embed(cfg: &HttpConfig, inputs: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
    if cfg.url.trim().is_empty() {
        return Err(EmbedError::Config(
            "memory_ext.embedding_url is empty".into(),
        ));
    }
    if cfg.model.trim().is_empty() {
        return Err(EmbedError::Config(
            "memory_ext.embedding_model is empty".into(),
        ));
    }
    let agent = post::agent(cfg.timeout_ms);
    let mut out = Vec::with_capacity(inputs.len());
    for chunk in inputs.chunks(cfg.batch.max(1)) {
        out.extend(embed_batch(cfg, &agent, chunk)?);
    }
    Ok(out)
}

fn embed_batch(
    cfg: &HttpConfig,
    agent: &ureq::Agent,
    inputs: &[&str],
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let url = cfg.endpoint();
    let body = request_body(cfg.api, &cfg.model, inputs);
    let mut attempt = 0;
    loop {
        let r = match post::json(agent, &url, cfg.api_key.as_deref(), &body.to_string()) {
            Ok(r) => r,
            Err(Failure::Timeout) => {
                return Err(EmbedError::Timeout {
                    url,
                    timeout_ms: cfg.timeout_ms,
                })
            }
            Err(Failure::Unreachable(reason)) => {
                return Err(EmbedError::Unreachable {
                    url,
                    reason: cfg.redact(&reason),
                })
            }
            Err(Failure::Body(reason)) => {
                return Err(EmbedError::Malformed {
                    url,
                    reason: cfg.redact(&reason),
                })
            }
        };
        if r.status == 200 {
            return parse_answer(cfg, &r.body, inputs.len());
        }
        match retry_after(r.status, r.retry_after.as_deref(), attempt) {
            Some(wait) if attempt < cfg.max_retries => {
                std::thread::sleep(wait);
                attempt += 1;
            }
            _ => {
                return Err(EmbedError::Http {
                    url,
                    status: r.status,
                    body: cfg.redact(&r.body.chars().take(200).collect::<String>()),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(api: Api) -> HttpConfig {
        HttpConfig {
            api,
            url: "http://127.0.0.1:1/v1/".into(),
            model: "m".into(),
            dims: 3,
            api_key: Some("sk-secret".into()),
            timeout_ms: 100,
            max_retries: 2,
            batch: 2,
        }
    }

    #[test]
    fn endpoints() {
        assert_eq!(
            cfg(Api::OpenAi).endpoint(),
            "http://127.0.0.1:1/v1/embeddings"
        );
        let o = HttpConfig {
            url: "http://h:11434".into(),
            ..cfg(Api::Ollama)
        };
        assert_eq!(o.endpoint(), "http://h:11434/api/embed");
    }

    #[test]
    fn openai_answers_are_reordered_by_index() {
        let body = r#"{"data":[{"embedding":[0,0,1],"index":1},{"embedding":[1,0,0],"index":0}]}"#;
        let v = parse_answer(&cfg(Api::OpenAi), body, 2).unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0, 0.0], vec![0.0, 0.0, 1.0]]);
    }

    #[test]
    fn bad_answers_are_named() {
        let c = cfg(Api::Ollama);
        assert!(matches!(
            parse_answer(&c, "{", 1),
            Err(EmbedError::Malformed { .. })
        ));
        assert!(matches!(
            parse_answer(&c, r#"{"embeddings":[[1,2,3]]}"#, 2),
            Err(EmbedError::Count {
                expected: 2,
                got: 1,
                ..
            })
        ));
        assert!(matches!(
            parse_answer(&c, r#"{"embeddings":[[1,2]]}"#, 1),
            Err(EmbedError::Dimensions {
                expected: 3,
                got: 2
            })
        ));
        let echo = r#"{"error":"bad key sk-secret"}"#;
        let e = parse_answer(&c, echo, 1).unwrap_err().to_string();
        assert!(!e.contains("sk-secret"), "{e}");
    }

    #[test]
    fn retry_policy() {
        assert_eq!(retry_after(400, None, 0), None);
        assert_eq!(retry_after(404, None, 0), None);
        assert_eq!(retry_after(500, None, 0), Some(Duration::from_millis(100)));
        assert_eq!(retry_after(503, None, 2), Some(Duration::from_millis(400)));
        assert_eq!(
            retry_after(429, Some("1"), 0),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(
            retry_after(429, Some("3600"), 0),
            Some(Duration::from_millis(MAX_BACKOFF_MS))
        );
    }
}
