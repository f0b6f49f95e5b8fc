//! The built-in model against the independent numpy reference (tests/reference), to 1e-4 per
//! dimension, plus a sanity check that it means something.
//!
//! The model files must be installed (`make deps`); MEMORY_EXT_MODEL_DIR overrides where.

use memory_providers::embed::builtin::{token_ids, MiniLm, DIMS};
use memory_providers::embed::cosine;
use std::path::PathBuf;
use std::sync::OnceLock;

fn model_dir() -> PathBuf {
    if let Ok(d) = std::env::var("MEMORY_EXT_MODEL_DIR") {
        return d.into();
    }
    let share = std::process::Command::new(
        std::env::var("PG_CONFIG")
            .unwrap_or_else(|_| "/usr/lib/postgresql/15/bin/pg_config".into()),
    )
    .arg("--sharedir")
    .output()
    .expect("pg_config --sharedir");
    PathBuf::from(String::from_utf8_lossy(&share.stdout).trim())
        .join("extension/memory_ext/models/all-MiniLM-L6-v2")
}

fn model() -> &'static MiniLm {
    static M: OnceLock<MiniLm> = OnceLock::new();
    M.get_or_init(|| {
        MiniLm::load(&model_dir())
            .unwrap_or_else(|e| panic!("{e} (run `make deps` to install the model)"))
    })
}

#[test]
fn matches_the_numpy_reference() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("reference/minilm_fixture.json")).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
    // All at once, so padding inside a batch is exercised too.
    let got = model().embed(&texts).unwrap();
    for (case, v) in cases.iter().zip(&got) {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<u32> = case["token_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            token_ids(model(), text).unwrap(),
            ids,
            "token ids of {text:?}"
        );
        let want: Vec<f32> = case["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(v.len(), DIMS);
        let worst = max_diff(v, &want);
        eprintln!(
            "{worst:.2e} max |rust - numpy| for {:?}",
            text.chars().take(40).collect::<String>()
        );
        assert!(worst < 1e-4, "{text:?}: max difference {worst}");
    }
    // One at a time gives the same vectors as the batch (padding does not leak in).
    assert_each_as_alone(&texts, &got);
}

/// Largest difference between two vectors, dimension by dimension.
fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max)
}

/// Each of `got` (one call's answers for `texts`) is what embedding its input alone gives.
fn assert_each_as_alone(texts: &[&str], got: &[Vec<f32>]) {
    assert_eq!(got.len(), texts.len());
    for (t, v) in texts.iter().zip(got) {
        let worst = max_diff(&model().embed(&[t]).unwrap()[0], v);
        assert!(worst < 1e-5, "{t:?}: in one call vs alone {worst}");
    }
}

#[test]
fn similar_sentences_score_clearly_higher() {
    let v = model()
        .embed(&[
            "The user prefers short, concise answers.",
            "Keep replies brief; the user likes concise responses.",
            "The capital of France is Paris.",
        ])
        .unwrap();
    let similar = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(similar > 0.6, "similar pair only {similar}");
    assert!(
        similar - unrelated > 0.4,
        "similar {similar} vs unrelated {unrelated}"
    );
    for x in &v {
        let norm: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}

#[test]
fn missing_model_names_the_fix() {
    let e = MiniLm::load(std::path::Path::new("/nonexistent/model"))
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("/nonexistent/model/config.json"),
        "{e}"
    );
    use memory_core::SqlError;
    assert!(e.hint().unwrap().contains("make deps"));
}

#[test]
fn long_calls_keep_input_order_across_batches() {
    // More inputs than one forward pass takes, longest first, so that grouping by length
    // reorders them across batches: every answer must still be its own input's vector.
    let texts: Vec<String> = (0..70)
        .map(|i| {
            format!(
                "note {i}: {}",
                "the garden plan needs more water ".repeat(70 - i)
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let got = model().embed(&refs).unwrap();
    assert_each_as_alone(&refs, &got);
}
