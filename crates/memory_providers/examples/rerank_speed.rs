//! Times the built-in reranker on one query against 5, 10 and 20 memories of LoCoMo-like length,
//! as memory_query's `"rerank": true` runs it:
//! `cargo run --release -p memory_providers --example rerank_speed [model dir]`.
use memory_providers::rerank::CrossEncoder;
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| {
        "/usr/share/postgresql/15/extension/memory_ext/models/ms-marco-MiniLM-L-12-v2".into()
    });
    let m = CrossEncoder::load(std::path::Path::new(&dir)).expect("model");
    let memory = "Caroline said she went to the LGBTQ support group last Tuesday and it was powerful, she felt accepted.";
    let query = "When did Caroline go to the LGBTQ support group?";
    for n in [5usize, 10, 20] {
        let texts: Vec<&str> = vec![memory; n];
        m.score(query, &texts).expect("score");
        let mut ms = vec![];
        for _ in 0..40 {
            let t = Instant::now();
            m.score(query, &texts).expect("score");
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        ms.sort_by(f64::total_cmp);
        println!("{n} memories: p50 {:.1} ms, p95 {:.1} ms", ms[20], ms[38]);
    }
}
