//! Times the built-in model on short sentences, one per call (as memory_query embeds a query):
//! `cargo run --release -p memory_providers --example embed_speed [model dir]`.
//! With `--texts FILE` (one input per line) it also times one call embedding all of them, as
//! memory_write_batch and the backfill do.
//! Set RAYON_NUM_THREADS / CANDLE_NUM_THREADS to compare thread counts.
use memory_providers::embed::builtin::{Encoder, MODELS};
use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let texts = args.iter().position(|a| a == "--texts").map(|i| {
        let file = args.get(i + 1).expect("--texts FILE").clone();
        args.drain(i..i + 2);
        std::fs::read_to_string(file).expect("reading --texts")
    });
    let dir = args.first().cloned().unwrap_or_else(|| {
        "/usr/share/postgresql/15/extension/memory_ext/models/all-MiniLM-L6-v2".into()
    });
    let name = std::path::Path::new(&dir)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let spec = MODELS
        .iter()
        .copied()
        .find(|s| s.name == name)
        .unwrap_or(MODELS[0]);
    let m = Encoder::load(std::path::Path::new(&dir), spec).expect("model");
    let sentences = [
        "What does Melanie do to relax after work?",
        "Emma recommended the quarterly budget review next month",
        "Ana is worried about green tea instead of coffee this weekend",
        "When did Caroline go to the LGBTQ support group?",
    ];
    for s in sentences {
        m.embed(&[s]).expect("embed");
    }
    let mut ms = vec![];
    for i in 0..200 {
        let t = Instant::now();
        m.embed(&[sentences[i % sentences.len()]]).expect("embed");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "single sentence: p50 {:.2} ms, p95 {:.2} ms",
        ms[100], ms[190]
    );
    if let Some(body) = texts {
        let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
        let t = Instant::now();
        m.embed(&lines).expect("embed");
        let s = t.elapsed().as_secs_f64();
        println!(
            "{} texts in one call: {s:.2} s, {:.1}/s",
            lines.len(),
            lines.len() as f64 / s
        );
    }
}
