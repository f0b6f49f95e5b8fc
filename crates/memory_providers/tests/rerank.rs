//! The built-in reranker against the independent numpy reference (tests/reference, mode
//! `rerank`), plus the order it must give on obvious pairs.
//!
//! The model files must be installed (`make deps`); MEMORY_EXT_MODELS overrides where.

use memory_providers::rerank::{pair_token_ids, CrossEncoder, MODEL_NAME};
use std::sync::OnceLock;

mod common;
use common::models_dir;

fn model() -> &'static CrossEncoder {
    static M: OnceLock<CrossEncoder> = OnceLock::new();
    M.get_or_init(|| {
        CrossEncoder::load(&models_dir().join(MODEL_NAME))
            .unwrap_or_else(|e| panic!("{e} (run `make deps` to install the models)"))
    })
}

#[test]
fn matches_the_numpy_reference() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("reference/rerank_fixture.json")).unwrap();
    assert_eq!(fixture["model"], MODEL_NAME);
    let cases = fixture["cases"].as_array().unwrap();
    for c in cases {
        let (q, t) = (c["query"].as_str().unwrap(), c["text"].as_str().unwrap());
        let ids: Vec<u32> = c["token_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(pair_token_ids(model(), q, t).unwrap(), ids, "{q:?} / {t:?}");
    }
    // Pairs of one query in one call (packed together), and each alone: both match numpy.
    let query = cases[0]["query"].as_str().unwrap();
    let same: Vec<&serde_json::Value> = cases.iter().filter(|c| c["query"] == query).collect();
    let texts: Vec<&str> = same.iter().map(|c| c["text"].as_str().unwrap()).collect();
    let together = model().score(query, &texts).unwrap();
    for (c, got) in same.iter().zip(together) {
        let want = c["score"].as_f64().unwrap() as f32;
        assert!((got - want).abs() < 1e-3, "{}: {got} vs {want}", c["text"]);
    }
    for c in cases {
        let (q, t) = (c["query"].as_str().unwrap(), c["text"].as_str().unwrap());
        let got = model().score(q, &[t]).unwrap()[0];
        let want = c["score"].as_f64().unwrap() as f32;
        assert!((got - want).abs() < 1e-3, "{q:?} / {t:?}: {got} vs {want}");
    }
}

#[test]
fn the_answer_outranks_the_neighbours() {
    let texts = [
        "Sam is allergic to peanuts.",
        "Sam works as a nurse at the city hospital.",
        "Sam has a dog named Biscuit.",
        "Sam moved from Boston to Denver in 2024.",
    ];
    let s = model().score("where does Sam live now?", &texts).unwrap();
    let best = (0..4).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap();
    assert_eq!(best, 3, "{s:?}");
}

#[test]
fn no_texts_no_scores_and_long_texts_are_cut_not_refused() {
    assert!(model().score("anything", &[]).unwrap().is_empty());
    let long = "the garden plan needs more water ".repeat(200);
    let s = model().score("garden", &[long.as_str(), "x"]).unwrap();
    assert_eq!(s.len(), 2);
    assert!(s.iter().all(|x| x.is_finite()));
}
