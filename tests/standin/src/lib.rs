//! A stand-in for remote embedding and chat endpoints: a real HTTP/1.1 server on 127.0.0.1
//! that speaks OpenAI's `POST /v1/embeddings`, Ollama's `POST /api/embed` and OpenAI's
//! `POST /v1/chat/completions`.
//!
//! Behaviour is chosen by the request's `model`, so one server serves every test:
//!
//! | model            | answer                                                        |
//! |------------------|---------------------------------------------------------------|
//! | `mock-<dims>`    | deterministic unit vectors of `<dims>` (default 8)            |
//! | `fail-500`       | HTTP 500, always                                              |
//! | `flaky-429-<id>` | HTTP 429 (Retry-After: 0) the first time each `<id>` is seen, then like `mock` |
//! | `slow-<ms>`      | waits `<ms>` ms, then like `mock`                              |
//! | `malformed`      | HTTP 200 with a body that is not JSON                          |
//! | `wrong-dims`     | vectors one dimension short of 8                               |
//! | `wrong-count`    | one vector fewer than inputs                                   |
//! | `echo-auth`      | HTTP 401 whose body repeats the Authorization header           |
//!
//! Chat completions answer with the text after `REPLY:` in a message, except for the same-fact
//! judges of memory_consolidate (the user message holds `{"pairs": [...]}`):
//!
//! | model              | answer                                                      |
//! |--------------------|-------------------------------------------------------------|
//! | `judge-same`       | every pair the same fact                                    |
//! | `judge-different`  | no pair the same fact                                       |
//! | `judge-partial`    | pair 1 the same, pair 2 with an invalid verdict, the rest unanswered |
//! | `judge-garbage`    | prose, not JSON                                             |
//! | `judge-slow-<ms>`  | waits `<ms>` ms, then like `judge-same`                     |
//!
//! Extraction (memory_extract and the worker's `extract` job; the user message is the batch as
//! JSON, `turns` and `known`) answers from markers in the turns, so a test says what the
//! "model" extracts: `FACT: <text>` (one fact per marker, `;`-separated markers in one turn),
//! `SUPERSEDES: <known text>` (the fact before it supersedes that known memory), `CATEGORY:
//! <name>` (last in a fact: the category the model files it under), `INSIGHT: <text>`,
//! `PROCEDURE: <title> | <step> | <step>`. Every answer reports `usage` (tokens = bytes / 4).
//! The theory-of-mind pass (its user message has a `snippet`) answers the snippet's `INSIGHT:
//! <text> [FIELD: <field>] [CONFIDENCE: <0-1>]` markers (`{max_tokens}` in one is replaced by
//! the request's `max_tokens`, or `none`); the extraction call itself gives insights only when
//! its input allows them.
//!
//! | model                  | answer                                                  |
//! |------------------------|---------------------------------------------------------|
//! | `extract-script`       | what the markers say                                    |
//! | `extract-slow-<ms>`    | waits `<ms>` ms, then like `extract-script`             |
//! | `extract-garbage`      | prose, not JSON                                         |
//! | `extract-refuse`       | a refusal, as some models answer                        |
//! | `extract-partial`      | the scripted facts plus entries that fail the checks    |
//! | `extract-fail`         | HTTP 500                                                |
//!
//! And `script-agent` plays a model that uses tools: a message holds `SCRIPT: [...]`, a list
//! of `{"name", "arguments"}` calls; while fewer tool results than calls are in the request it
//! asks for the next call (`tool_calls`, id `call_<n>`), then answers with the last tool
//! result's text (examples/agent_loop.py).
//!
//! Every request is counted per model (`hits`), so tests can check retries and batching.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Default)]
pub struct StandIn {
    pub port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl StandIn {
    /// Starts a server on 127.0.0.1:`port` (0 = any free port) in background threads.
    pub fn start(port: u16) -> StandIn {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind stand-in");
        let s = StandIn {
            port: listener.local_addr().unwrap().port(),
            hits: Arc::default(),
        };
        let shared = s.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let st = shared.clone();
                std::thread::spawn(move || {
                    let _ = st.serve(conn);
                });
            }
        });
        s
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Requests seen for `model` so far.
    pub fn hits(&self, model: &str) -> usize {
        *self.hits.lock().unwrap().get(model).unwrap_or(&0)
    }

    fn serve(&self, mut conn: TcpStream) -> std::io::Result<()> {
        conn.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut reader = BufReader::new(conn.try_clone()?);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let (mut len, mut auth) = (0usize, String::new());
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 || h == "\r\n" {
                break;
            }
            let lower = h.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("authorization:") {
                auth = h["authorization:".len()..].trim().to_string();
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (status, headers, text) = self.answer(&path, &req, &auth);
        let mut out = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
            text.len()
        );
        for h in headers {
            out.push_str(h);
            out.push_str("\r\n");
        }
        out.push_str("\r\n");
        out.push_str(&text);
        conn.write_all(out.as_bytes())?;
        conn.flush()
    }

    fn answer(&self, path: &str, req: &Value, auth: &str) -> (u16, Vec<&'static str>, String) {
        let model = req["model"].as_str().unwrap_or("").to_string();
        let seen = {
            let mut h = self.hits.lock().unwrap();
            let n = h.entry(model.clone()).or_insert(0);
            *n += 1;
            *n
        };
        if path.ends_with("/chat/completions") {
            if let Some(mode) = model.strip_prefix("judge-") {
                return (200, vec![], judge_answer(mode, req));
            }
            if model == "script-agent" {
                return (200, vec![], script_answer(req));
            }
            if let Some(mode) = model.strip_prefix("extract-") {
                if mode == "fail" {
                    return (500, vec![], r#"{"error":"internal"}"#.into());
                }
                return (200, vec![], extract_answer(mode, req));
            }
            return (200, vec![], chat_answer(req));
        }
        let inputs: Vec<String> = match &req["input"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a
                .iter()
                .map(|v| v.as_str().unwrap_or("").to_string())
                .collect(),
            _ => vec![],
        };
        let mut dims = 8;
        let mut count = inputs.len();
        match model.as_str() {
            "fail-500" => return (500, vec![], r#"{"error":"internal"}"#.into()),
            "malformed" => return (200, vec![], "{this is not json".into()),
            "echo-auth" => {
                return (
                    401,
                    vec![],
                    json!({ "error": format!("bad key: {auth}") }).to_string(),
                )
            }
            "wrong-dims" => dims = 7,
            "wrong-count" => count = count.saturating_sub(1),
            m if m.starts_with("flaky-429") && seen == 1 => {
                return (
                    429,
                    vec!["Retry-After: 0"],
                    r#"{"error":"slow down"}"#.into(),
                )
            }
            m if m.starts_with("slow-") => {
                let ms = m["slow-".len()..].parse().unwrap_or(1000);
                std::thread::sleep(Duration::from_millis(ms));
            }
            m if m.starts_with("mock-") => dims = m["mock-".len()..].parse().unwrap_or(8),
            _ => {}
        }
        let vectors: Vec<Vec<f32>> = inputs.iter().take(count).map(|t| vector(t, dims)).collect();
        let text = if path.ends_with("/api/embed") {
            json!({ "model": model, "embeddings": vectors }).to_string()
        } else {
            let data: Vec<Value> = vectors
                .iter()
                .enumerate()
                .map(|(i, v)| json!({ "object": "embedding", "index": i, "embedding": v }))
                .collect();
            json!({ "object": "list", "model": model, "data": data }).to_string()
        };
        (200, vec![], text)
    }
}

/// A deterministic unit vector for `text` (FNV-1a seeded xorshift): equal texts, equal vectors.
pub fn vector(text: &str, dims: usize) -> Vec<f32> {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    let mut v: Vec<f32> = (0..dims)
        .map(|_| {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            (h % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// Chat completions: the reply is whatever the test put in the system message after
/// `REPLY:`, else a fixed sentence.
fn chat_answer(req: &Value) -> String {
    let reply = req["messages"]
        .as_array()
        .and_then(|m| {
            m.iter().find_map(|x| {
                x["content"]
                    .as_str()?
                    .split_once("REPLY:")
                    .map(|(_, r)| r.trim().to_string())
            })
        })
        .unwrap_or_else(|| "A short summary.".into());
    json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": reply }, "finish_reason": "stop" }] })
        .to_string()
}

/// `script-agent` (see the module comment): the next scripted tool call, or the final answer.
fn script_answer(req: &Value) -> String {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let script: Vec<Value> = messages
        .iter()
        .find_map(|m| {
            let (_, rest) = m["content"].as_str()?.split_once("SCRIPT:")?;
            serde_json::from_str(rest.trim()).ok()
        })
        .unwrap_or_default();
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    let n = results.len();
    if n < script.len() {
        let call = &script[n];
        let msg = json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{n}"), "type": "function",
            "function": {"name": call["name"], "arguments": call["arguments"].to_string()}}]});
        return json!({"choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls"}]})
            .to_string();
    }
    let last = results
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or("Nothing to do.");
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": last}, "finish_reason": "stop"}]})
        .to_string()
}

/// The same-fact judges (see the module table).
fn judge_answer(mode: &str, req: &Value) -> String {
    let n = req["messages"]
        .as_array()
        .and_then(|m| {
            m.iter().find_map(|x| {
                let v: Value = serde_json::from_str(x["content"].as_str()?).ok()?;
                Some(v["pairs"].as_array()?.len())
            })
        })
        .unwrap_or(0);
    let all = |same: bool| {
        json!({"results": (1..=n).map(|p| json!({"pair": p, "same": same})).collect::<Vec<_>>()})
            .to_string()
    };
    let content = match mode {
        "same" => all(true),
        "different" => all(false),
        "partial" => json!({"results": [{"pair": 1, "same": true}, {"pair": 2, "same": "maybe"}]})
            .to_string(),
        "garbage" => "Sure, they look like the same thing to me.".to_string(),
        m => {
            if let Some(ms) = m.strip_prefix("slow-").and_then(|x| x.parse().ok()) {
                std::thread::sleep(Duration::from_millis(ms));
            }
            all(true)
        }
    };
    json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }] })
        .to_string()
}

/// The extraction models (see the module table).
fn extract_answer(mode: &str, req: &Value) -> String {
    let input: Value = req["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["role"] == "user"))
        .and_then(|m| serde_json::from_str(m["content"].as_str()?).ok())
        .unwrap_or_default();
    if let Some(ms) = mode.strip_prefix("slow-").and_then(|x| x.parse().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    // The theory-of-mind pass (its input has a snippet): the snippet's INSIGHT markers,
    // `INSIGHT: text [FIELD: tone] [CONFIDENCE: 0.9]`.
    if let Some(snippet) = input["snippet"].as_str() {
        let mut insights = vec![];
        for marker in snippet.split([';', '\n']) {
            let Some(i) = marker.trim().strip_prefix("INSIGHT:").or_else(|| {
                marker
                    .find("INSIGHT:")
                    .map(|p| &marker[p + "INSIGHT:".len()..])
            }) else {
                continue;
            };
            let (i, confidence) = match i.split_once("CONFIDENCE:") {
                Some((a, b)) => (a, b.trim().parse::<f64>().ok()),
                None => (i, None),
            };
            let (text, field) = match i.split_once("FIELD:") {
                Some((a, b)) => (a.trim(), Some(b.trim())),
                None => (i.trim(), None),
            };
            // `{max_tokens}` in a marker: the cap the request asked for, so a test sees it.
            let cap = req["max_tokens"]
                .as_u64()
                .map_or("none".to_string(), |n| n.to_string());
            let text = text.replace("{max_tokens}", &cap);
            let mut insight = json!({"summary": text, "tags": ["style"], "importance": 2});
            if let Some(f) = field {
                insight["field"] = json!(f);
            }
            if let Some(c) = confidence {
                insight["confidence"] = json!(c);
            }
            insights.push(insight);
        }
        let content = json!({ "insights": insights }).to_string();
        return json!({
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
            "usage": {"prompt_tokens": req.to_string().len() / 4, "completion_tokens": content.len() / 4},
        })
        .to_string();
    }
    let known: Vec<String> = input["known"]
        .as_array()
        .map(|k| {
            k.iter()
                .map(|x| x["text"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let (mut facts, mut insights, mut procedures) = (vec![], vec![], vec![]);
    for t in input["turns"].as_array().cloned().unwrap_or_default() {
        let turn = t["turn"].clone();
        for marker in t["text"].as_str().unwrap_or("").split(';') {
            let marker = marker.trim();
            if let Some(f) = marker.strip_prefix("FACT:") {
                let (f, category) = match f.split_once("CATEGORY:") {
                    Some((a, b)) => (a, Some(b.trim())),
                    None => (f, None),
                };
                let (text, old) = match f.split_once("SUPERSEDES:") {
                    Some((a, b)) => (a.trim(), Some(b.trim())),
                    None => (f.trim(), None),
                };
                let mut fact =
                    json!({"turn": turn, "text": text, "about": t["speaker"], "importance": 3});
                if let Some(n) = old.and_then(|o| known.iter().position(|k| k == o)) {
                    fact["supersedes"] = json!(n + 1);
                }
                if let Some(c) = category {
                    fact["category"] = json!(c);
                }
                facts.push(fact);
            } else if let Some(i) = marker.strip_prefix("INSIGHT:") {
                // Only when the call allows insights (the theory-of-mind pass has its own).
                if input["insights"] == json!(true) {
                    insights.push(json!({"summary": i.trim(), "tags": ["style"], "importance": 2}));
                }
            } else if let Some(p) = marker.strip_prefix("PROCEDURE:") {
                let mut parts = p.split('|').map(str::trim);
                let title = parts.next().unwrap_or("");
                procedures.push(
                    json!({"turn": turn, "title": title, "steps": parts.collect::<Vec<_>>()}),
                );
            }
        }
    }
    if mode == "partial" {
        facts
            .push(json!({"turn": 999_999, "text": "A fact from a turn that is not in the batch."}));
        facts.push(json!({"turn": input["turns"][0]["turn"], "text": "x".repeat(400)}));
        facts.push(json!("not an object"));
    }
    let content = match mode {
        "garbage" => "Here are the facts I found: Sam likes tea, probably.".to_string(),
        "refuse" => "I'm sorry, but I can't help with that request.".to_string(),
        _ => json!({"facts": facts, "insights": insights, "procedures": procedures}).to_string(),
    };
    let input_len = req.to_string().len();
    json!({
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
        "usage": {"prompt_tokens": input_len / 4, "completion_tokens": content.len() / 4},
    })
    .to_string()
}
