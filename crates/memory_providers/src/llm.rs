//! The optional LLM: any OpenAI-compatible `POST <url>/chat/completions` (docs/api.md "Embeddings
//! and LLM"), used for consolidation's same-fact checks and for summaries. Temperature 0 and a
//! JSON answer where the caller asks for one. Every call is bounded by `timeout_ms` and never
//! retried here: the callers are background jobs that skip what failed and try again on their
//! next run, and a worker must not sit in HTTP calls longer than its shutdown grace period.

use crate::post::{self, Failure};
use serde_json::{json, Value};
use std::fmt;

#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Base URL ending in `/v1`.
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Connect + send + receive, per call.
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    Timeout {
        url: String,
        ms: u64,
    },
    Unreachable {
        url: String,
        reason: String,
    },
    Status {
        url: String,
        status: u16,
        body: String,
    },
    Malformed {
        url: String,
        reason: String,
    },
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Timeout { url, ms } => {
                write!(f, "LLM endpoint {url} did not answer within {ms} ms")
            }
            LlmError::Unreachable { url, reason } => {
                write!(f, "LLM endpoint {url} unreachable: {reason}")
            }
            LlmError::Status { url, status, body } => {
                write!(f, "LLM endpoint {url} answered HTTP {status}: {body}")
            }
            LlmError::Malformed { url, reason } => write!(
                f,
                "LLM endpoint {url} answered something unusable: {reason}"
            ),
        }
    }
}

impl LlmConfig {
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.url.trim_end_matches('/'))
    }

    fn redact(&self, s: &str) -> String {
        match &self.api_key {
            Some(k) if !k.is_empty() => s.replace(k.as_str(), "[redacted]"),
            _ => s.to_string(),
        }
    }
}

/// The request body: system + user message, temperature 0, JSON output when `json_answer`.
pub fn request_body(model: &str, system: &str, user: &str, json_answer: bool) -> Value {
    let mut b = json!({
        "model": model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    });
    if json_answer {
        b["response_format"] = json!({"type": "json_object"});
    }
    b
}

/// The assistant's text in a chat-completions answer.
pub fn parse_answer(body: &str) -> Result<String, String> {
    parse_full(body).map(|a| a.text)
}

/// An answer with what it cost, when the endpoint says (`usage`, as OpenAI and most
/// compatible servers report it).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
}

fn parse_full(body: &str) -> Result<Answer, String> {
    let v: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    let text = v["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| "no choices[0].message.content".to_string())?;
    Ok(Answer {
        text,
        tokens_in: v["usage"]["prompt_tokens"].as_u64(),
        tokens_out: v["usage"]["completion_tokens"].as_u64(),
    })
}

/// One chat completion with its usage, the answer capped at `max_tokens` when given.
pub fn chat_full(
    cfg: &LlmConfig,
    system: &str,
    user: &str,
    json_answer: bool,
    max_tokens: Option<u32>,
) -> Result<Answer, LlmError> {
    let url = cfg.endpoint();
    let ms = cfg.timeout_ms.max(1);
    let mut body = request_body(&cfg.model, system, user, json_answer);
    if let Some(m) = max_tokens {
        body["max_tokens"] = json!(m);
    }
    let body = body.to_string();
    let r = match post::json(&post::agent(ms), &url, cfg.api_key.as_deref(), &body) {
        Ok(r) => r,
        Err(Failure::Timeout) => return Err(LlmError::Timeout { url, ms }),
        Err(Failure::Unreachable(reason)) => {
            return Err(LlmError::Unreachable {
                url,
                reason: cfg.redact(&reason),
            })
        }
        Err(Failure::Body(reason)) => return Err(LlmError::Malformed { url, reason }),
    };
    if r.status != 200 {
        let body: String = cfg.redact(&r.body).chars().take(200).collect();
        return Err(LlmError::Status {
            url,
            status: r.status,
            body,
        });
    }
    parse_full(&r.body).map_err(|reason| LlmError::Malformed { url, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_and_answer_shapes() {
        let b = request_body("m", "sys", "usr", true);
        assert_eq!(b["temperature"], 0);
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(b["response_format"]["type"], "json_object");
        assert!(request_body("m", "s", "u", false)
            .get("response_format")
            .is_none());
        let a = r#"{"choices":[{"message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(parse_answer(a).unwrap(), "hi");
        assert!(parse_answer(r#"{"choices":[]}"#).is_err());
        assert!(parse_answer("{oops").is_err());
        let u = parse_full(r#"{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}"#).unwrap();
        assert_eq!((u.tokens_in, u.tokens_out), (Some(12), Some(3)));
        assert_eq!(parse_full(a).unwrap().tokens_in, None);
    }

    #[test]
    fn unreachable_and_timeout_are_errors_not_hangs() {
        // Nothing listens on port 9 of 127.0.0.1 (discard): refused at once.
        let cfg = LlmConfig {
            url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: Some("sk-secret".into()),
            timeout_ms: 500,
        };
        let e = chat_full(&cfg, "s", "u", true, None).unwrap_err();
        assert!(
            matches!(e, LlmError::Unreachable { .. } | LlmError::Timeout { .. }),
            "{e}"
        );
        assert!(!e.to_string().contains("sk-secret"));
        // A listener that never answers: the timeout ends the call.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let cfg = LlmConfig {
            url: format!("http://{}/v1", l.local_addr().unwrap()),
            timeout_ms: 300,
            ..cfg
        };
        let t = std::time::Instant::now();
        let e = chat_full(&cfg, "s", "u", true, None).unwrap_err();
        assert!(matches!(e, LlmError::Timeout { .. }), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(3));
    }
}
