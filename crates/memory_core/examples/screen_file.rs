//! Screens every text of a file and prints each finding and the time screening took per text:
//! how `make bench screen` measures screening's cost per write and its false positives on a
//! conversation corpus.
//!   cargo run --release -p memory_core --example screen_file -- FILE
//! FILE is a LoCoMo-format JSON file (every turn, image caption and observation is a text), a
//! plain file of one text per line, or a labelled set (`.tsv`: detector<TAB>text, "none" for a
//! hard negative, as tests/data/screen_cases.tsv), for which it prints recall by family, every
//! miss and every false positive (how `make eval` reports screening's quality).
use memory_core::screen::{self, Policy};
use std::time::Instant;

fn texts(path: &str) -> Vec<String> {
    let raw = std::fs::read_to_string(path).expect("readable file");
    if !path.ends_with(".json") {
        return raw.lines().map(str::to_string).collect();
    }
    let doc: serde_json::Value = serde_json::from_str(&raw).expect("JSON");
    let mut out = vec![];
    for sample in doc.as_array().into_iter().flatten() {
        for (key, session) in sample["conversation"].as_object().into_iter().flatten() {
            if !key.starts_with("session_") {
                continue;
            }
            for turn in session.as_array().into_iter().flatten() {
                for field in ["text", "blip_caption"] {
                    if let Some(t) = turn[field].as_str() {
                        out.push(t.to_string());
                    }
                }
            }
        }
        for speakers in sample["observation"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|x| x.1)
        {
            for facts in speakers.as_object().into_iter().flatten().map(|x| x.1) {
                for f in facts.as_array().into_iter().flatten() {
                    if let Some(t) = f.get(0).and_then(|t| t.as_str()) {
                        out.push(t.to_string());
                    }
                }
            }
        }
    }
    out
}

/// Recall per family and false positives on a labelled set.
fn labelled(path: &str) {
    use std::collections::BTreeMap;
    let raw = std::fs::read_to_string(path).expect("readable file");
    let mut by_family: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut negatives, mut false_positives, mut report) = (0, 0, vec![]);
    for line in raw.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (det, text) = line.split_once('\t').expect("detector<TAB>text");
        let text = text.replace("\\n", "\n").replace("\\\\", "\\");
        let names: Vec<&str> = screen::scan(&text).iter().map(|f| f.detector).collect();
        if det == "none" {
            negatives += 1;
            if !names.is_empty() {
                false_positives += 1;
                report.push(format!("false positive {names:?}: {text}"));
            }
            continue;
        }
        let family = screen::family_of(det).map_or("unknown", |f| f.name());
        let e = by_family.entry(family).or_default();
        e.0 += 1;
        if names.contains(&det) {
            e.1 += 1;
        } else {
            report.push(format!("missed {det} (found {names:?}): {text}"));
        }
    }
    for (family, (n, found)) in &by_family {
        println!(
            "{family}: {found}/{n} found (recall {:.3})",
            *found as f64 / *n as f64
        );
    }
    for r in &report {
        println!("{r}");
    }
    println!("hard negatives: {false_positives}/{negatives} flagged");
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("a LoCoMo JSON file, a file of texts or a labelled .tsv");
    if path.ends_with(".tsv") {
        return labelled(&path);
    }
    let texts = texts(&path);
    let policy = Policy::defaults();
    // Compiles the detectors and loads the phone metadata before timing, as a server's
    // postmaster does once (src/embed/preload.rs).
    screen::warm();
    let (mut hits, mut ms) = (0, Vec::with_capacity(texts.len()));
    for t in &texts {
        let start = Instant::now();
        let o = screen::apply(&policy, t);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        let names: Vec<&str> = o
            .redacted
            .iter()
            .chain(&o.allowed)
            .chain(&o.blocked)
            .copied()
            .collect();
        if !names.is_empty() {
            hits += 1;
            println!("flagged {names:?} (stored as: {})\t{t}", o.text);
        }
    }
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    println!(
        "{} texts ({} characters on average): {} flagged; screening per text p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms",
        texts.len(),
        chars / texts.len().max(1),
        hits,
        pct(0.5),
        pct(0.95),
        pct(1.0)
    );
}
