//! Loading a LoCoMo-format file in each shape the eval measures, through memory_write_batch.
//!
//! - `turns`: each turn one memory (kind `archival`), thread per session, the speaker as
//!   `actor_id`, the session date as `happened_at` (never in the text: `Speaker: what they said`,
//!   as a transcript line reads).
//! - `bare`: the same texts with the event time only: no thread, no actor (a naive caller).
//! - `facts`: each session's `observation` entries, one memory per fact (kind `semantic`), thread
//!   per session, the person the fact is about as `actor_id`, the session date as `happened_at`;
//!   a fact covers the turns it cites.
//!
//! - `files`: each session one memory file (memory_file_write), its
//!   transcript as the content (`Speaker: what they said` per line) and the session's date in
//!   its title, as a person keeping a note per conversation would; a file covers every turn of
//!   its session. Asked through memory_file_search, the ranking memory_context recalls files by.
//!
//! Each shape of a conversation is a tenant of its own (`locomo:<id>`, `locomo-bare:<id>`,
//! `locomo-facts:<id>`, `locomo-files:<id>`); which turns a memory or file covers is kept in its
//! metadata (`dia_ids`), so that `--reuse` can read a loaded tenant back instead of writing it
//! again. A file is known by its path where a memory is known by its id.

use postgres::types::Json;
use postgres::Client;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    Turns,
    Bare,
    Facts,
    Files,
}

impl Shape {
    pub const ALL: [Shape; 4] = [Shape::Turns, Shape::Bare, Shape::Facts, Shape::Files];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Turns => "turns",
            Shape::Bare => "bare",
            Shape::Facts => "facts",
            Shape::Files => "files",
        }
    }

    pub fn parse(s: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|x| x.name() == s)
    }

    pub fn title(self) -> &'static str {
        match self {
            Shape::Turns => "turns, structured (thread per session, speaker as actor, session date as event time)",
            Shape::Bare => "turns, bare (event time only: no thread, no actor)",
            Shape::Facts => "facts (each session's observations, one memory per fact, thread per session, actor = the person)",
            Shape::Files => "files (each session one memory file: its transcript, the session's date in the title; memory_file_search)",
        }
    }

    fn tenant(self, sample: &str) -> String {
        match self {
            Shape::Turns => format!("locomo:{sample}"),
            Shape::Bare => format!("locomo-bare:{sample}"),
            Shape::Facts => format!("locomo-facts:{sample}"),
            Shape::Files => format!("locomo-files:{sample}"),
        }
    }
}

pub struct Question {
    pub tenant: String,
    /// The conversation (`sample_id`), for looking up sessions of dialogue ids.
    pub conv: String,
    pub text: String,
    pub category: i64,
    pub evidence: Vec<String>,
    /// The conversation's last session time: questions are asked after it (memory_query's
    /// `reference_time`, for relative times such as "last May").
    pub reference: Option<String>,
}

/// What one stored memory stands for.
#[derive(Clone, Debug)]
pub struct Covered {
    /// The dialogue turns it covers ("D3:7").
    pub dias: Vec<String>,
    /// `<sample>:<session number>`.
    pub session: String,
}

pub struct Loaded {
    pub questions: Vec<Question>,
    /// memory id -> what it covers
    pub memories: HashMap<String, Covered>,
    /// conversation -> dialogue id -> session, from the conversation itself (shape-independent)
    pub sessions: HashMap<String, HashMap<String, String>>,
    pub written: usize,
}

struct Session<'a> {
    n: u32,
    turns: &'a Vec<Value>,
    date: String,
}

fn sessions(conv: &serde_json::Map<String, Value>) -> Vec<Session<'_>> {
    let mut out: Vec<Session> = conv
        .iter()
        .filter_map(|(k, v)| {
            let n: u32 = k.strip_prefix("session_")?.parse().ok()?;
            Some(Session {
                n,
                turns: v.as_array()?,
                date: conv
                    .get(&format!("session_{n}_date_time"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            })
        })
        .collect();
    out.sort_by_key(|s| s.n);
    out
}

/// "1:56 pm on 8 May, 2023" -> RFC 3339, when it parses.
fn session_time(s: &str) -> Option<String> {
    chrono::NaiveDateTime::parse_from_str(&s.to_uppercase(), "%I:%M %p ON %d %B, %Y")
        .ok()
        .map(|t| t.and_utc().to_rfc3339())
}

/// Evidence ids, with the data README's traps handled: a string or a list, several ids in one
/// string, malformed ids dropped.
pub fn evidence(v: &Value) -> Vec<String> {
    let items: Vec<&str> = match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    items
        .into_iter()
        .flat_map(|s| s.split([';', ',', ' ']).map(str::trim).map(str::to_string).collect::<Vec<_>>())
        .filter(|e| {
            let Some(rest) = e.strip_prefix('D') else { return false };
            let mut p = rest.split(':');
            matches!((p.next(), p.next(), p.next()), (Some(a), Some(b), None) if a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        })
        .collect()
}

fn push_questions(
    sample: &Value,
    tenant: &str,
    conv: &str,
    known: &HashSet<String>,
    reference: Option<String>,
    out: &mut Vec<Question>,
) {
    for q in sample["qa"].as_array().into_iter().flatten() {
        let category = q["category"].as_i64().unwrap_or(0);
        if !(1..=4).contains(&category) {
            continue;
        }
        let ev: Vec<String> = evidence(&q["evidence"])
            .into_iter()
            .filter(|e| known.contains(e))
            .collect();
        if ev.is_empty() {
            continue;
        }
        out.push(Question {
            tenant: tenant.to_string(),
            conv: conv.to_string(),
            text: q["question"].as_str().unwrap_or("").to_string(),
            category,
            evidence: ev,
            reference: reference.clone(),
        });
    }
}

/// A session's memory_write_batch requests, each with the turns it covers.
type Batch = Vec<(Value, Vec<String>)>;

/// One memory_write_batch request per session: (session number, its batch).
fn requests(
    shape: Shape,
    sample: &str,
    conv: &serde_json::Map<String, Value>,
    obs: &Value,
) -> Vec<(u32, Batch)> {
    let mut out = vec![];
    for s in sessions(conv) {
        let thread = format!("{sample}:session_{}", s.n);
        let when = session_time(&s.date);
        let mut batch = vec![];
        if shape == Shape::Facts {
            let facts = &obs[format!("session_{}_observation", s.n)];
            for (person, list) in facts.as_object().into_iter().flatten() {
                for f in list.as_array().into_iter().flatten() {
                    let text = f[0].as_str().unwrap_or("").trim();
                    let dias = evidence(&f[1]);
                    if text.is_empty() {
                        continue;
                    }
                    let mut r = json!({"text": text, "kind": "semantic", "thread_id": thread,
                                       "actor_id": person, "metadata": {"dia_ids": dias}});
                    if let Some(t) = &when {
                        r["happened_at"] = json!(t);
                    }
                    batch.push((r, dias));
                }
            }
        } else {
            for t in s.turns {
                let speaker = t["speaker"].as_str().unwrap_or("");
                let mut text = format!("{speaker}: {}", t["text"].as_str().unwrap_or(""));
                if let Some(c) = t["blip_caption"].as_str() {
                    text.push_str(&format!(" [image: {c}]"));
                }
                let dia = t["dia_id"].as_str().unwrap_or("").to_string();
                let mut r =
                    json!({"text": text, "kind": "archival", "metadata": {"dia_ids": [dia]}});
                if shape == Shape::Turns {
                    r["thread_id"] = json!(thread);
                    r["actor_id"] = json!(speaker);
                    r["role"] = json!("user");
                }
                if let Some(t) = &when {
                    r["happened_at"] = json!(t);
                }
                // EVAL_LANGUAGE: every turn written in this language (`en`: read as before
                // 0.13.0, the baseline of the multilingual eval, bench/multilingual/eval.py).
                if let Ok(l) = std::env::var("EVAL_LANGUAGE") {
                    r["language"] = json!(l);
                }
                batch.push((r, vec![dia]));
            }
        }
        out.push((s.n, batch));
    }
    out
}

fn set_tenant(db: &mut Client, tenant: &str) {
    db.batch_execute(&format!(
        "SET memory_ext.user_id = '{}'",
        tenant.replace('\'', "''")
    ))
    .unwrap();
}

/// Loads `data` in `shape`. With `reuse`, a tenant already holding memories is read back from
/// their metadata instead of being written again (for tuning loops; a fresh load is the figure).
pub fn load(db: &mut Client, data: &Value, shape: Shape, reuse: bool) -> Loaded {
    let mut l = Loaded {
        questions: vec![],
        memories: HashMap::new(),
        sessions: HashMap::new(),
        written: 0,
    };
    for sample in data.as_array().expect("a LoCoMo file is a JSON array") {
        let id = sample["sample_id"].as_str().unwrap_or("conv").to_string();
        let tenant = shape.tenant(&id);
        let conv = sample["conversation"].as_object().expect("conversation");
        let mut known = HashSet::new();
        let sess = l.sessions.entry(id.clone()).or_default();
        for s in sessions(conv) {
            for t in s.turns {
                let dia = t["dia_id"].as_str().unwrap_or("").to_string();
                known.insert(dia.clone());
                sess.insert(dia, format!("{id}:{}", s.n));
            }
        }
        let last = sessions(conv)
            .iter()
            .filter_map(|s| session_time(&s.date))
            .max();
        push_questions(sample, &tenant, &id, &known, last, &mut l.questions);
        let session_of = |dias: &[String], sess: &HashMap<String, String>, fallback: &str| {
            dias.iter()
                .find_map(|d| sess.get(d).cloned())
                .unwrap_or_else(|| fallback.to_string())
        };
        if shape == Shape::Files {
            let sess = sess.clone();
            load_files(db, &id, &tenant, conv, &sess, reuse, &mut l);
            continue;
        }
        let have: i64 = db
            .query_one(
                "SELECT count(*) FROM memory.items WHERE user_id = $1 AND state = 'active'",
                &[&tenant],
            )
            .unwrap()
            .get(0);
        if reuse && have > 0 {
            for r in db
                .query(
                    "SELECT id::text, ARRAY(SELECT jsonb_array_elements_text(metadata->'dia_ids')), coalesce(split_part(thread_id, ':session_', 2), '') \
                     FROM memory.items WHERE user_id = $1 AND state = 'active'",
                    &[&tenant],
                )
                .unwrap()
            {
                let dias: Vec<String> = r.get(1);
                let fallback = format!("{id}:{}", r.get::<_, String>(2));
                let session = session_of(&dias, sess, &fallback);
                l.memories.insert(r.get(0), Covered { dias, session });
                l.written += 1;
            }
            continue;
        }
        db.execute("DELETE FROM memory.items WHERE user_id = $1", &[&tenant])
            .unwrap();
        db.execute("DELETE FROM memory.threads WHERE user_id = $1", &[&tenant])
            .unwrap();
        set_tenant(db, &tenant);
        for (n, batch) in requests(shape, &id, conv, &sample["observation"]) {
            if batch.is_empty() {
                continue;
            }
            let reqs: Vec<Value> = batch.iter().map(|(r, _)| r.clone()).collect();
            let resp: Json<Value> = db
                .query_one(
                    "SELECT memory_write_batch($1)",
                    &[&Json(Value::Array(reqs))],
                )
                .unwrap()
                .get(0);
            for ((_, dias), r) in batch.iter().zip(resp.0.as_array().unwrap()) {
                let mid = r["id"].as_str().unwrap().to_string();
                let fallback = format!("{id}:{n}");
                let session = session_of(dias, sess, &fallback);
                // A near duplicate merged into an earlier memory: that memory now covers both.
                let e = l.memories.entry(mid).or_insert_with(|| Covered {
                    dias: vec![],
                    session,
                });
                for d in dias {
                    if !e.dias.contains(d) {
                        e.dias.push(d.clone());
                    }
                }
                l.written += 1;
            }
        }
        // Keep merged coverage in metadata too, so that --reuse reads back what was scored.
        for (mid, c) in &l.memories {
            if c.dias.len() > 1 && shape == Shape::Facts && c.session.starts_with(&format!("{id}:"))
            {
                db.execute(
                    "UPDATE memory.items SET metadata = jsonb_set(metadata, '{dia_ids}', $3) WHERE user_id = $1 AND id = $2::text::uuid AND metadata->'dia_ids' <> $3",
                    &[&tenant, mid, &Json(json!(c.dias))],
                )
                .unwrap();
            }
        }
    }
    l
}

/// How a file is known in [`Loaded::memories`]: paths repeat from one conversation (tenant)
/// to the next, memory ids do not.
pub fn file_key(tenant: &str, path: &str) -> String {
    format!("{tenant}\u{0}{path}")
}

/// The `files` shape of one conversation: a memory file per session (see the module note).
fn load_files(
    db: &mut Client,
    id: &str,
    tenant: &str,
    conv: &serde_json::Map<String, Value>,
    sess: &HashMap<String, String>,
    reuse: bool,
    l: &mut Loaded,
) {
    let have: i64 = db
        .query_one(
            "SELECT count(*) FROM memory.files WHERE user_id = $1",
            &[&tenant],
        )
        .unwrap()
        .get(0);
    if reuse && have > 0 {
        for r in db
            .query(
                "SELECT path, ARRAY(SELECT jsonb_array_elements_text(metadata->'dia_ids')) FROM memory.files WHERE user_id = $1",
                &[&tenant],
            )
            .unwrap()
        {
            let dias: Vec<String> = r.get(1);
            let session = dias
                .iter()
                .find_map(|d| sess.get(d).cloned())
                .unwrap_or_else(|| format!("{id}:0"));
            l.memories.insert(file_key(tenant, &r.get::<_, String>(0)), Covered { dias, session });
            l.written += 1;
        }
        return;
    }
    db.execute("DELETE FROM memory.files WHERE user_id = $1", &[&tenant])
        .unwrap();
    set_tenant(db, tenant);
    for s in sessions(conv) {
        let mut lines = vec![];
        let mut dias = vec![];
        for t in s.turns {
            let speaker = t["speaker"].as_str().unwrap_or("");
            let mut line = format!("{speaker}: {}", t["text"].as_str().unwrap_or(""));
            if let Some(c) = t["blip_caption"].as_str() {
                line.push_str(&format!(" [image: {c}]"));
            }
            lines.push(line);
            dias.push(t["dia_id"].as_str().unwrap_or("").to_string());
        }
        if lines.is_empty() {
            continue;
        }
        let path = format!("conversations/session-{:02}.md", s.n);
        let title = if s.date.is_empty() {
            format!("Conversation {}", s.n)
        } else {
            format!("Conversation of {}", s.date)
        };
        db.execute(
            "SELECT memory_file_write($1, $2, $3, NULL, $4)",
            &[
                &path,
                &lines.join("\n"),
                &title,
                &Json(json!({ "dia_ids": dias })),
            ],
        )
        .unwrap();
        l.memories.insert(
            file_key(tenant, &path),
            Covered {
                dias,
                session: format!("{id}:{}", s.n),
            },
        );
        l.written += 1;
    }
}
