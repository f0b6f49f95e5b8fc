//! Embedding providers.

pub mod builtin;
pub mod http;

use memory_core::{SqlError, SqlState};

/// What can go wrong when turning text into vectors. Messages never contain an API key: the
/// HTTP client redacts it from anything a server sends back.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EmbedError {
    #[error("embedding model not found: {path} is missing")]
    ModelMissing { path: String },
    #[error("embedding model at {path} could not be loaded: {reason}")]
    ModelLoad { path: String, reason: String },
    #[error("embedding model failed: {0}")]
    Inference(String),
    #[error("embedding endpoint {url} is unreachable: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("embedding endpoint {url} did not answer within {timeout_ms} ms")]
    Timeout { url: String, timeout_ms: u64 },
    #[error("embedding endpoint {url} answered HTTP {status}: {body}")]
    Http {
        url: String,
        status: u16,
        body: String,
    },
    #[error("embedding endpoint {url} answered malformed JSON: {reason}")]
    Malformed { url: String, reason: String },
    #[error("embedding endpoint {url} returned {got} vectors for {expected} inputs")]
    Count {
        url: String,
        expected: usize,
        got: usize,
    },
    #[error("embedding has {got} dimensions, expected {expected}")]
    Dimensions { expected: usize, got: usize },
    #[error("embedding provider is not configured: {0}")]
    Config(String),
}

impl SqlError for EmbedError {
    fn sqlstate(&self) -> SqlState {
        match self {
            EmbedError::ModelMissing { .. } => SqlState::UndefinedFile,
            EmbedError::Config(_) => SqlState::InvalidParameterValue,
            _ => SqlState::SystemError,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            EmbedError::ModelMissing { .. } => Some(
                "install it with `make deps` (scripts/deps.sh model), or point memory_ext.model_path at a directory with config.json, tokenizer.json and model.safetensors".into(),
            ),
            EmbedError::Config(_) => Some("see the memory_ext.embedding_* settings in the README".into()),
            EmbedError::Dimensions { .. } => Some("set memory_ext.embedding_dims to the model's dimension count".into()),
            _ => None,
        }
    }
}

/// L2-normalise in place (cosine similarity then equals the dot product). A zero vector stays
/// zero rather than becoming NaN.
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}
