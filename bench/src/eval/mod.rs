//! `make eval`: retrieval quality on a LoCoMo-format file, through the public API only.
//!
//! Each conversation becomes one tenant; each session one thread; each turn one memory written
//! with memory_write_batch (kind `archival`, the speaker as `actor_id`, the session date as
//! `happened_at` and as a prefix of the text, the turn id in `metadata`). Every question of
//! categories 1-4 with evidence is asked through memory_query (top_k 100), and the ranked
//! memories are scored against the question's evidence turns:
//!   tR@k   share of the question's evidence turns among the first k memories
//!   all@k  1 when every evidence turn is among the first k
//!   sR@k   share of the evidence sessions among the first k distinct sessions of the ranking
//! Ablations re-run the questions with one ranking component switched off
//! (memory_ext.rank_weights).

use postgres::{Client, NoTls};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

struct Question {
    tenant: String,
    text: String,
    category: i64,
    evidence: Vec<String>,
}

struct Loaded {
    questions: Vec<Question>,
    /// memory id -> (dia_id, session)
    turns: HashMap<String, (String, String)>,
    turns_written: usize,
}

fn sessions(conv: &serde_json::Map<String, Value>) -> Vec<(u32, &Vec<Value>, String)> {
    let mut out: Vec<(u32, &Vec<Value>, String)> = conv
        .iter()
        .filter_map(|(k, v)| {
            let n: u32 = k.strip_prefix("session_")?.parse().ok()?;
            let turns = v.as_array()?;
            let date = conv
                .get(&format!("session_{n}_date_time"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            Some((n, turns, date))
        })
        .collect();
    out.sort_by_key(|s| s.0);
    out
}

/// "1:56 pm on 8 May, 2023" -> RFC 3339, when it parses.
fn session_time(s: &str) -> Option<String> {
    chrono::NaiveDateTime::parse_from_str(&s.to_uppercase(), "%I:%M %p ON %d %B, %Y")
        .ok()
        .map(|t| t.and_utc().to_rfc3339())
}

/// Evidence ids, with the README's traps handled: several ids in one string, malformed ids.
fn evidence(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(|s| s.split([';', ',']).map(str::trim).map(str::to_string).collect::<Vec<_>>())
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
    known: &HashSet<String>,
    questions: &mut Vec<Question>,
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
        questions.push(Question {
            tenant: tenant.to_string(),
            text: q["question"].as_str().unwrap_or("").to_string(),
            category,
            evidence: ev,
        });
    }
}

/// With `reuse`, a conversation already loaded (as many memories as turns) is not written again:
/// its turn map is read back from the memories' metadata. For tuning loops.
fn load(db: &mut Client, data: &Value, reuse: bool) -> Loaded {
    let mut questions = vec![];
    let mut turns = HashMap::new();
    let mut written = 0;
    for sample in data.as_array().expect("a LoCoMo file is a JSON array") {
        let id = sample["sample_id"].as_str().unwrap_or("conv");
        let tenant = format!("locomo:{id}");
        let conv = sample["conversation"].as_object().expect("conversation");
        let n_turns: usize = sessions(conv).iter().map(|s| s.1.len()).sum();
        let have: i64 = db
            .query_one(
                "SELECT count(*) FROM memory.items WHERE user_id = $1",
                &[&tenant],
            )
            .unwrap()
            .get(0);
        if reuse && have as usize == n_turns {
            let mut known = HashSet::new();
            for r in db
                .query(
                    "SELECT id::text, metadata->>'dia_id', split_part(thread_id, ':session_', 2) FROM memory.items WHERE user_id = $1",
                    &[&tenant],
                )
                .unwrap()
            {
                let dia: String = r.get(1);
                let n: String = r.get(2);
                known.insert(dia.clone());
                turns.insert(r.get::<_, String>(0), (dia, format!("{id}:{n}")));
                written += 1;
            }
            push_questions(sample, &tenant, &known, &mut questions);
            continue;
        }
        db.execute("DELETE FROM memory.items WHERE user_id = $1", &[&tenant])
            .unwrap();
        db.execute("DELETE FROM memory.threads WHERE user_id = $1", &[&tenant])
            .unwrap();
        db.batch_execute(&format!(
            "SET memory_ext.user_id = '{}'",
            tenant.replace('\'', "''")
        ))
        .unwrap();
        let mut known = HashSet::new();
        for (n, list, date) in sessions(conv) {
            let thread = format!("{id}:session_{n}");
            let reqs: Vec<Value> = list
                .iter()
                .map(|t| {
                    let speaker = t["speaker"].as_str().unwrap_or("");
                    let mut text =
                        format!("[{date}] {speaker}: {}", t["text"].as_str().unwrap_or(""));
                    if let Some(c) = t["blip_caption"].as_str() {
                        text.push_str(&format!(" [image: {c}]"));
                    }
                    let mut r = json!({
                        "text": text, "kind": "archival", "thread_id": thread, "actor_id": speaker,
                        "role": "user", "metadata": {"dia_id": t["dia_id"]},
                    });
                    if let Some(ts) = session_time(&date) {
                        r["happened_at"] = json!(ts);
                    }
                    r
                })
                .collect();
            let resp: postgres::types::Json<Value> = db
                .query_one(
                    "SELECT memory_write_batch($1)",
                    &[&postgres::types::Json(Value::Array(reqs))],
                )
                .unwrap()
                .get(0);
            for (t, r) in list.iter().zip(resp.0.as_array().unwrap()) {
                let dia = t["dia_id"].as_str().unwrap_or("").to_string();
                known.insert(dia.clone());
                turns.insert(
                    r["id"].as_str().unwrap().to_string(),
                    (dia, format!("{id}:{n}")),
                );
                written += 1;
            }
        }
        push_questions(sample, &tenant, &known, &mut questions);
    }
    Loaded {
        questions,
        turns,
        turns_written: written,
    }
}

type Scores = BTreeMap<String, f64>;

fn score(
    ranked: &[(String, String)],
    q: &Question,
    sessions_of: &HashMap<String, String>,
) -> Scores {
    let ev: HashSet<&str> = q.evidence.iter().map(String::as_str).collect();
    let ev_sessions: HashSet<&str> = q
        .evidence
        .iter()
        .filter_map(|e| sessions_of.get(e).map(String::as_str))
        .collect();
    if std::env::var("EVAL_DEBUG").is_ok() {
        let firsts: Vec<&str> = ranked.iter().take(6).map(|(_, s)| s.as_str()).collect();
        eprintln!(
            "{:?} ev={:?} ev_sessions={:?} first={:?}",
            q.text, q.evidence, ev_sessions, firsts
        );
    }
    let mut s = Scores::new();
    for k in [5, 10, 20] {
        let hit = ranked
            .iter()
            .take(k)
            .filter(|(d, _)| ev.contains(d.as_str()))
            .count();
        s.insert(format!("tR@{k}"), hit as f64 / ev.len() as f64);
    }
    let top10: HashSet<&str> = ranked.iter().take(10).map(|(d, _)| d.as_str()).collect();
    s.insert(
        "all@10".into(),
        f64::from(u8::from(ev.iter().all(|e| top10.contains(e)))),
    );
    let mut distinct: Vec<&str> = vec![];
    for (_, sess) in ranked {
        if !distinct.contains(&sess.as_str()) {
            distinct.push(sess);
        }
    }
    for k in [5, 10] {
        let hit = distinct
            .iter()
            .take(k)
            .filter(|x| ev_sessions.contains(*x))
            .count();
        s.insert(
            format!("sR@{k}"),
            hit as f64 / ev_sessions.len().max(1) as f64,
        );
    }
    s
}

fn mean(rows: &[Scores]) -> Scores {
    let mut out = Scores::new();
    for r in rows {
        for (k, v) in r {
            *out.entry(k.clone()).or_default() += v / rows.len() as f64;
        }
    }
    out
}

/// Asks every question with `weights` (a memory_ext.rank_weights value, "" = defaults).
fn ask(db: &mut Client, l: &Loaded, weights: &str) -> (Scores, BTreeMap<i64, Scores>, f64) {
    db.batch_execute(&format!("SET memory_ext.rank_weights = '{weights}'"))
        .unwrap();
    // dia ids repeat across conversations ("D1:3" is in every one): sessions are looked up per
    // conversation.
    let mut by_conv: HashMap<String, HashMap<String, String>> = HashMap::new();
    for (d, s) in l.turns.values() {
        let conv = s.rsplit_once(':').map_or("", |x| x.0).to_string();
        by_conv
            .entry(conv)
            .or_default()
            .insert(d.clone(), s.clone());
    }
    let mut rows = vec![];
    let mut by_cat: BTreeMap<i64, Vec<Scores>> = BTreeMap::new();
    let t0 = std::time::Instant::now();
    // EVAL_TOP_K: ask for fewer results (the pool shrinks with top_k: rank::lexical_side and
    // rank::vector_side), to check that recall@5 holds for the top-5 requests agents make.
    let top_k: usize = std::env::var("EVAL_TOP_K")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    for q in &l.questions {
        let req = json!({"query": q.text, "filters": {"user_id": q.tenant}, "top_k": top_k});
        db.batch_execute(&format!(
            "SET memory_ext.user_id = '{}'",
            q.tenant.replace('\'', "''")
        ))
        .unwrap();
        let r: postgres::types::Json<Value> = db
            .query_one("SELECT memory_query($1)", &[&postgres::types::Json(req)])
            .unwrap()
            .get(0);
        let ranked: Vec<(String, String)> = r.0["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| l.turns.get(i["id"].as_str()?).cloned())
            .collect();
        let conv = q.tenant.trim_start_matches("locomo:");
        let empty = HashMap::new();
        let local = by_conv.get(conv).unwrap_or(&empty);
        let s = score(&ranked, q, local);
        by_cat.entry(q.category).or_default().push(s.clone());
        rows.push(s);
    }
    let ms = t0.elapsed().as_secs_f64() * 1e3 / l.questions.len().max(1) as f64;
    (
        mean(&rows),
        by_cat.into_iter().map(|(c, v)| (c, mean(&v))).collect(),
        ms,
    )
}

const METRICS: [&str; 6] = ["tR@5", "tR@10", "tR@20", "all@10", "sR@5", "sR@10"];

fn row(name: &str, s: &Scores) -> String {
    format!(
        "| {name} | {} |\n",
        METRICS
            .map(|m| format!("{:.3}", s.get(m).copied().unwrap_or(0.0)))
            .join(" | ")
    )
}

pub fn run(dsn: &str, file: &str, out: &str, ablation: bool, reuse: bool) {
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("read the data file"))
            .expect("JSON");
    let mut db = Client::connect(dsn, NoTls).unwrap();
    let t0 = std::time::Instant::now();
    let l = load(&mut db, &data, reuse);
    let load_s = t0.elapsed().as_secs_f64();
    eprintln!(
        "loaded {} turns in {load_s:.1} s; {} questions",
        l.turns_written,
        l.questions.len()
    );
    let configs: Vec<(&str, &str)> = if ablation {
        vec![
            ("memory_query (all components)", ""),
            ("  without vector similarity", r#"{"vector": 0}"#),
            ("  without BM25", r#"{"lexical": 0}"#),
            (
                "  without episode neighbours (follows edges)",
                r#"{"hop1": 0, "hop2": 0}"#,
            ),
            ("  without thread BM25", r#"{"thread": 0}"#),
            ("  without actor match", r#"{"actor": 0}"#),
            (
                "  without importance/pinned/recency",
                r#"{"importance": 0, "pinned": 0, "recency": 0}"#,
            ),
            (
                "BM25 alone (our statistics)",
                r#"{"vector": 0, "hop1": 0, "hop2": 0, "thread": 0, "actor": 0, "importance": 0, "pinned": 0, "recency": 0}"#,
            ),
            (
                "vector alone",
                r#"{"lexical": 0, "hop1": 0, "hop2": 0, "thread": 0, "actor": 0, "importance": 0, "pinned": 0, "recency": 0}"#,
            ),
            (
                "0.5/0.5 BM25 + vector (no structure)",
                r#"{"hop1": 0, "hop2": 0, "thread": 0, "actor": 0, "importance": 0, "pinned": 0, "recency": 0}"#,
            ),
        ]
    } else {
        vec![("memory_query (all components)", "")]
    };
    // EVAL_WEIGHTS replaces the main configuration's weights (for tuning loops with --reuse).
    let tuned = std::env::var("EVAL_WEIGHTS").unwrap_or_default();
    let configs: Vec<(&str, &str)> = configs
        .into_iter()
        .map(|(n, w)| {
            if w.is_empty() && !tuned.is_empty() {
                (n, tuned.as_str())
            } else {
                (n, w)
            }
        })
        .collect();
    let header = format!(
        "| configuration | {} |\n|---|{}\n",
        METRICS.join(" | "),
        "---|".repeat(METRICS.len())
    );
    let mut md = format!(
        "# Retrieval quality: {file}\n\n{} questions (categories 1-4 with evidence), {} turns loaded through memory_write_batch in {load_s:.0} s; each question through memory_query (top_k 100).\n\n{header}",
        l.questions.len(),
        l.turns_written
    );
    let mut js = json!({ "file": file, "questions": l.questions.len(), "turns": l.turns_written, "configs": [] });
    let mut cats_md = String::new();
    for (i, (name, w)) in configs.iter().enumerate() {
        let (all, cats, ms) = ask(&mut db, &l, w);
        eprint!("{}", row(name, &all));
        md.push_str(&row(name, &all));
        js["configs"].as_array_mut().unwrap().push(json!({ "name": name.trim(), "weights": w, "overall": all, "per_category": cats, "ms_per_query": ms }));
        if i == 0 {
            cats_md = format!(
                "\n## Per category (all components)\n\n{}",
                header.replace("configuration", "category")
            );
            for (c, s) in &cats {
                let label = match c {
                    1 => "1 multi-hop",
                    2 => "2 temporal",
                    3 => "3 open-domain",
                    4 => "4 single-hop",
                    _ => "?",
                };
                cats_md.push_str(&row(label, s));
            }
            cats_md.push_str(&format!(
                "\nmean memory_query latency in this run: {ms:.1} ms\n"
            ));
        }
    }
    db.batch_execute("RESET memory_ext.rank_weights").unwrap();
    md.push_str(&cats_md);
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(format!("{out}/eval.md"), &md).unwrap();
    std::fs::write(
        format!("{out}/eval.json"),
        serde_json::to_string_pretty(&js).unwrap(),
    )
    .unwrap();
    print!("{md}");
}
