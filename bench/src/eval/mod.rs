//! `make eval`: retrieval quality on a LoCoMo-format file, through the public API only, in every
//! shape of data the eval measures (load.rs): structured turns, bare turns and facts.
//!
//! Every question of categories 1-4 with evidence is asked, for each shape, three ways on the
//! same stored rows: through memory_query (top_k 100), as the raw pgvector order of the active
//! model (`ORDER BY embedding <=> q`, exact) and as BM25 alone (memory_query with every other
//! signal weighed 0). The ranked memories are scored against the question's evidence turns
//! (score.rs). Ablations re-run memory_query with one ranking component switched off
//! (memory_ext.rank_weights).

mod load;
mod score;

use load::{Covered, Loaded, Shape};
use postgres::types::Json;
use postgres::{Client, NoTls};
use score::{best_order, mean, row, score, Scores, METRICS};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What a configuration asks.
enum Ask<'a> {
    /// memory_query under these memory_ext.rank_weights ("" = the defaults).
    Query(&'a str),
    /// memory_query with `"rerank": true` under these weights.
    Reranked(&'a str),
    /// The active model's raw pgvector order over the tenant's active memories.
    Vector,
    /// memory_file_search (the ranking memory_context recalls files by).
    Files,
    /// The active model's raw pgvector order over the tenant's memory files.
    FileVector,
    /// Postgres full-text rank alone over the files (`ts_rank_cd`, any query word).
    FileText,
}

const NO_STRUCTURE: &str = r#""hop1": 0, "hop2": 0, "thread": 0, "actor": 0, "entity": 0, "time": 0, "importance": 0, "pinned": 0, "recency": 0"#;

/// The `files` shape's configurations: our file ranking and its two references.
fn file_configs() -> Vec<(String, Ask<'static>)> {
    vec![
        (
            "memory_file_search (keyword and meaning fused)".to_string(),
            Ask::Files,
        ),
        (
            "raw pgvector order (ORDER BY embedding <=> q)".to_string(),
            Ask::FileVector,
        ),
        (
            "full-text rank alone (ts_rank_cd, any query word)".to_string(),
            Ask::FileText,
        ),
    ]
}

fn configs(ablation: bool) -> Vec<(String, Ask<'static>)> {
    let bm25 = Box::leak(format!(r#"{{"vector": 0, {NO_STRUCTURE}}}"#).into_boxed_str());
    // EVAL_WEIGHTS replaces the main configuration's weights (for tuning loops with --reuse).
    let tuned = Box::leak(
        std::env::var("EVAL_WEIGHTS")
            .unwrap_or_default()
            .into_boxed_str(),
    );
    let mut c = vec![
        (
            "memory_query (all components)".to_string(),
            Ask::Query(tuned),
        ),
        (
            "raw pgvector order (ORDER BY embedding <=> q)".to_string(),
            Ask::Vector,
        ),
        ("BM25 alone (our statistics)".to_string(), Ask::Query(bm25)),
        (
            "memory_query + rerank (built-in cross-encoder)".to_string(),
            Ask::Reranked(tuned),
        ),
    ];
    if ablation {
        let fused = Box::leak(format!("{{{NO_STRUCTURE}}}").into_boxed_str());
        // One row per ranking signal (memory_core::rank::SIGNALS), its weights set to 0. The
        // reranker is off in memory_query's default ranking: its row is "+ rerank" above.
        for s in memory_core::rank::SIGNALS {
            if s.name == "rerank" {
                continue;
            }
            let off: Vec<String> = s.weights.iter().map(|w| format!("\"{w}\": 0")).collect();
            let w = Box::leak(format!("{{{}}}", off.join(", ")).into_boxed_str());
            c.push((format!("  without {}", s.about), Ask::Query(w)));
        }
        c.push((
            "0.5/0.5 BM25 + vector (no structure)".to_string(),
            Ask::Query(fused),
        ));
    }
    c
}

struct Result {
    all: Scores,
    per_category: BTreeMap<i64, Scores>,
    ms: f64,
    /// The scores of the ranking with its first `depth` memories in their best order, for each
    /// depth of `BEST_DEPTHS` (score::best_order).
    best: Vec<Scores>,
}

/// Depths at which the eval reports the best reordering of memory_query's ranking: what a
/// reranker reading that many (memory_ext.rerank_depth) could reach at most.
const BEST_DEPTHS: [usize; 2] = [10, 20];

fn set_tenant(db: &mut Client, tenant: &str) {
    db.batch_execute(&format!(
        "SET memory_ext.user_id = '{}'",
        tenant.replace('\'', "''")
    ))
    .unwrap();
}

fn ask(db: &mut Client, l: &Loaded, how: &Ask) -> Result {
    if let Ask::Query(w) | Ask::Reranked(w) = how {
        db.batch_execute(&format!("SET memory_ext.rank_weights = '{w}'"))
            .unwrap();
    }
    // EVAL_TOP_K: ask for fewer results (the pool shrinks with top_k: rank::lexical_side and
    // rank::vector_side), to check that recall@5 holds for the top-5 requests agents make.
    let top_k: i64 = std::env::var("EVAL_TOP_K")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let debug = std::env::var("EVAL_DEBUG").is_ok();
    let mut rows = vec![];
    let mut best_rows: Vec<Vec<Scores>> = vec![vec![]; BEST_DEPTHS.len()];
    let mut by_cat: BTreeMap<i64, Vec<Scores>> = BTreeMap::new();
    let t0 = std::time::Instant::now();
    for q in &l.questions {
        set_tenant(db, &q.tenant);
        let ids: Vec<String> = match how {
            Ask::Query(_) | Ask::Reranked(_) => {
                let mut req = json!({"query": q.text, "filters": {"user_id": q.tenant}, "top_k": top_k,
                    "rerank": matches!(how, Ask::Reranked(_))});
                if let Some(t) = &q.reference {
                    req["reference_time"] = json!(t);
                }
                let r: Json<Value> = db
                    .query_one("SELECT memory_query($1)", &[&Json(req)])
                    .unwrap()
                    .get(0);
                r.0["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|i| i["id"].as_str().map(str::to_string))
                    .collect()
            }
            Ask::Vector => db
                .query(
                    // The query's vector once (MATERIALIZED): pulled up into a generic
                    // plan, memory_embed($2) ran once per row, about a second a question.
                    "WITH q AS MATERIALIZED (SELECT memory_embed($2) AS v) \
                     SELECT i.id::text FROM memory.items i, q \
                     WHERE i.user_id = $1 AND i.state = 'active' AND i.embedding IS NOT NULL \
                     ORDER BY i.embedding <=> q.v LIMIT $3",
                    &[&q.tenant, &format!("{}{}", query_prefix(), q.text), &top_k],
                )
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
            // Files: at most 100 per search (memory_file_search's limit); a conversation has
            // fewer sessions than that.
            Ask::Files => db
                .query(
                    "SELECT path FROM memory_file_search($1, NULL, $2)",
                    &[&q.text, &(top_k.min(100) as i32)],
                )
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
            Ask::FileVector => db
                .query(
                    "WITH q AS MATERIALIZED (SELECT memory_embed($2) AS v) \
                     SELECT f.path FROM memory.files f, q \
                     WHERE f.user_id = $1 AND f.embedding IS NOT NULL \
                     ORDER BY f.embedding <=> q.v, f.path LIMIT $3",
                    &[&q.tenant, &format!("{}{}", query_prefix(), q.text), &top_k],
                )
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
            Ask::FileText => db
                .query(
                    "SELECT f.path FROM memory.files f, \
                     (SELECT replace(plainto_tsquery('english', $2)::text, '&', '|') AS t) q \
                     WHERE f.user_id = $1 \
                     ORDER BY CASE WHEN q.t = '' THEN 0 ELSE ts_rank_cd(f.tsv, q.t::tsquery) END DESC, f.path \
                     LIMIT $3",
                    &[&q.tenant, &q.text, &top_k],
                )
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
        };
        // Files are known by tenant and path (load::file_key), memories by id.
        let files = matches!(how, Ask::Files | Ask::FileVector | Ask::FileText);
        let ranked: Vec<&Covered> = ids
            .iter()
            .filter_map(|i| {
                if files {
                    l.memories.get(&load::file_key(&q.tenant, i))
                } else {
                    l.memories.get(i)
                }
            })
            .collect();
        let empty = Default::default();
        let sessions = l.sessions.get(&q.conv).unwrap_or(&empty);
        let s = score(&ranked, q, sessions);
        for (d, out) in BEST_DEPTHS.iter().zip(best_rows.iter_mut()) {
            out.push(score(&best_order(&ranked, q, *d), q, sessions));
        }
        if debug {
            let firsts: Vec<&str> = ranked
                .iter()
                .take(5)
                .flat_map(|c| c.dias.iter().map(String::as_str))
                .collect();
            eprintln!(
                "{:?} ev={:?} first={:?} tR@5={:.2}",
                q.text, q.evidence, firsts, s["tR@5"]
            );
        }
        by_cat.entry(q.category).or_default().push(s.clone());
        rows.push(s);
    }
    Result {
        all: mean(&rows),
        per_category: by_cat.into_iter().map(|(c, v)| (c, mean(&v))).collect(),
        ms: t0.elapsed().as_secs_f64() * 1e3 / l.questions.len().max(1) as f64,
        best: best_rows.iter().map(|r| mean(r)).collect(),
    }
}

/// The query instruction memory_query puts before a query for the active built-in model
/// (crates/memory_providers/src/embed/builtin.rs `Spec::query_prefix`): the raw vector order
/// embeds the question the same way, so both compare the same query vector.
fn query_prefix() -> &'static str {
    match std::env::var("EVAL_MODEL").as_deref() {
        Ok("bge-small-en-v1.5") => "Represent this sentence for searching relevant passages: ",
        Ok("multilingual-e5-small") => "query: ",
        _ => "",
    }
}

fn category(c: i64) -> &'static str {
    match c {
        1 => "1 multi-hop",
        2 => "2 temporal",
        3 => "3 open-domain",
        4 => "4 single-hop",
        _ => "?",
    }
}

/// `shapes`: which shapes to load and ask (all three when empty; EVAL_SHAPES in scripts/eval.sh).
pub fn run(dsn: &str, file: &str, out: &str, ablation: bool, reuse: bool, shapes: &[String]) {
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("read the data file"))
            .expect("JSON");
    let shapes_asked: Vec<String> = shapes.iter().filter(|s| !s.is_empty()).cloned().collect();
    let shapes: Vec<Shape> = if shapes_asked.is_empty() {
        Shape::ALL.to_vec()
    } else {
        shapes_asked
            .iter()
            .map(|s| Shape::parse(s).unwrap_or_else(|| panic!("unknown shape {s}")))
            .collect()
    };
    let mut db = Client::connect(dsn, NoTls).unwrap();
    // EVAL_MODEL: the built-in embedding model to write and ask with (memory_ext.builtin_model).
    let model = std::env::var("EVAL_MODEL").unwrap_or_else(|_| "all-MiniLM-L6-v2".into());
    // EVAL_PRECISION=half (scripts/eval.sh): the database's models get halfvec indexes.
    let precision: String = db
        .query_one(
            "SELECT coalesce(current_setting('memory_ext.embedding_precision', true), 'full')",
            &[],
        )
        .unwrap()
        .get(0);
    db.batch_execute(&format!(
        "SET memory_ext.builtin_model = '{}'",
        model.replace('\'', "''")
    ))
    .unwrap();
    // EVAL_RERANK_DEPTH: memories the reranker reads (memory_ext.rerank_depth; default 10).
    let depth: i64 = std::env::var("EVAL_RERANK_DEPTH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    db.batch_execute(&format!("SET memory_ext.rerank_depth = {depth}"))
        .unwrap();
    let header = format!(
        "| configuration | {} |\n|---|{}\n",
        METRICS.join(" | "),
        "---|".repeat(METRICS.len())
    );
    let mut summary = String::from(
        "| shape | memory_query tR@5 | raw vector tR@5 | BM25 tR@5 | goal tR@5 (best + 0.08) | memory_query sR@10 | raw vector sR@10 | BM25 sR@10 | goal sR@10 (vector + 0.02) | with rerank tR@5 | goal with rerank (vector + 0.12) | with rerank sR@10 |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut sections = String::new();
    let mut js_shapes = vec![];
    let mut n_questions = 0;
    for shape in shapes {
        let t0 = std::time::Instant::now();
        let l = load::load(&mut db, &data, shape, reuse);
        let load_s = t0.elapsed().as_secs_f64();
        n_questions = l.questions.len();
        eprintln!(
            "{}: {} memories in {load_s:.1} s; {} questions",
            shape.name(),
            l.written,
            l.questions.len()
        );
        let written = if shape == Shape::Files {
            "files written through memory_file_write"
        } else {
            "memories written through memory_write_batch"
        };
        let mut md = format!(
            "\n## {}\n\n{} {written} in {load_s:.0} s.\n\n{header}",
            shape.title(),
            l.written
        );
        let mut js = json!({"shape": shape.name(), "memories": l.written, "configs": []});
        let mut firsts: Vec<Scores> = vec![];
        let mut cats_md = String::new();
        let mut best_md = String::new();
        let cs = if shape == Shape::Files {
            file_configs()
        } else {
            configs(ablation)
        };
        for (i, (name, how)) in cs.iter().enumerate() {
            let r = ask(&mut db, &l, how);
            eprint!("{} {}", shape.name(), row(name, &r.all));
            md.push_str(&row(name, &r.all));
            let weights = match how {
                Ask::Query(w) | Ask::Reranked(w) => json!(w),
                _ => Value::Null,
            };
            js["configs"].as_array_mut().unwrap().push(json!({
                "name": name.trim(), "weights": weights, "overall": r.all,
                "per_category": r.per_category, "ms_per_query": r.ms }));
            if i < 4 {
                firsts.push(r.all.clone());
            }
            if i == 3 {
                // After the reranked row, which they bound.
                md.push_str(&best_md);
            }
            if i == 0 {
                // What reordering the top could reach at most (the reranker's headroom).
                for (d, b) in BEST_DEPTHS.iter().zip(&r.best) {
                    let name = format!("  memory_query's first {d} in their best order (the most a reranker reading {d} can reach)");
                    best_md.push_str(&row(&name, b));
                    js["best_order"][d.to_string()] = json!(b);
                }
                cats_md = format!(
                    "\n### Per category (memory_query)\n\n{}",
                    header.replace("configuration", "category")
                );
                for (c, s) in &r.per_category {
                    cats_md.push_str(&row(category(*c), s));
                }
                cats_md.push_str(&format!(
                    "\nmean memory_query latency in this run: {:.1} ms\n",
                    r.ms
                ));
            }
        }
        md.push_str(&cats_md);
        sections.push_str(&md);
        let g = |s: &Scores, m: &str| s.get(m).copied().unwrap_or(0.0);
        // The files shape has no rerank row: its figures show as 0 there.
        let none = Scores::new();
        let (q, v, b, rr) = (
            &firsts[0],
            &firsts[1],
            &firsts[2],
            firsts.get(3).unwrap_or(&none),
        );
        let goal_rr = g(v, "tR@5") + 0.12;
        let goal5 = g(v, "tR@5").max(g(b, "tR@5")) + 0.08;
        let goal10 = g(v, "sR@10") + 0.02;
        let mark = |x: f64, goal: f64| if x >= goal - 1e-9 { "met" } else { "not met" };
        summary.push_str(&format!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} ({}) | {:.3} | {:.3} | {:.3} | {:.3} ({}) | {:.3} | {:.3} ({}) | {:.3} |\n",
            shape.name(),
            g(q, "tR@5"),
            g(v, "tR@5"),
            g(b, "tR@5"),
            goal5,
            mark(g(q, "tR@5"), goal5),
            g(q, "sR@10"),
            g(v, "sR@10"),
            g(b, "sR@10"),
            goal10,
            mark(g(q, "sR@10"), goal10),
            g(rr, "tR@5"),
            goal_rr,
            mark(g(rr, "tR@5"), goal_rr),
            g(rr, "sR@10"),
        ));
        if firsts.len() < 4 {
            // No rerank row for this shape (files): say so rather than show zeros.
            let cut = summary.rfind(&format!(
                "| {:.3} | {:.3} ({}) | {:.3} |\n",
                g(rr, "tR@5"),
                goal_rr,
                mark(g(rr, "tR@5"), goal_rr),
                g(rr, "sR@10")
            ));
            if let Some(c) = cut {
                summary.truncate(c);
                summary.push_str("| n/a | n/a | n/a |\n");
            }
        }
        js_shapes.push(js);
    }
    db.batch_execute("RESET memory_ext.rank_weights").unwrap();
    let md = format!(
        "# Retrieval quality: {file}\n\n{n_questions} questions (categories 1-4 with evidence) per shape; built-in model {model}; {precision}-precision HNSW indexes; reranker depth {depth}; memory_query asked for top_k 100 with default settings; \
         the raw vector order and BM25 alone on the same stored rows in the same run.\n\n{summary}{sections}"
    );
    std::fs::create_dir_all(out).unwrap();
    // The default model's figures are eval.{md,json}; another model's carry its name.
    let mut stem = if model == "all-MiniLM-L6-v2" {
        "eval".to_string()
    } else {
        format!("eval-{model}")
    };
    if precision != "full" {
        stem = format!("{stem}-{precision}");
    }
    // A run of some shapes does not overwrite the figures of all of them.
    if !shapes_asked.is_empty() {
        stem = format!("{stem}-{}", shapes_asked.join("-"));
    }
    std::fs::write(format!("{out}/{stem}.md"), &md).unwrap();
    let js = json!({ "file": file, "model": model, "precision": precision, "rerank_depth": depth, "questions": n_questions, "shapes": js_shapes });
    std::fs::write(
        format!("{out}/{stem}.json"),
        serde_json::to_string_pretty(&js).unwrap(),
    )
    .unwrap();
    print!("{md}");
}
