//! The write path's embeddings, one path for every write: memories (single and batch),
//! messages, summaries, details and files all get their vectors from [`for_writes`].
//!
//! A write is never lost to its embedding: a provider that is down, slow or answers garbage, or
//! a full model registry, gives a [`WriteEmbedding::Failed`] that the caller stores without a
//! vector and records (src/embed/reembed.rs retries it with backoff).

use crate::embed::{self, vector_text, ActiveModel};
use crate::gucs;
use crate::pg::{owner, spi};

/// What a write stores: a vector of the active model, or nothing and the reason.
#[derive(Debug, Clone)]
pub enum WriteEmbedding {
    Vector {
        model: String,
        vector: Vec<f32>,
    },
    /// `memory_ext.embed_on_write` is off: the backfill will embed the row.
    Deferred,
    Failed {
        model: String,
        error: String,
    },
}

impl WriteEmbedding {
    /// The `(embedding, embedding_model)` column values to store: the vector's text form and
    /// its model, or both NULL.
    pub fn columns(&self) -> (Option<String>, Option<&str>) {
        match self {
            WriteEmbedding::Vector { model, vector } => {
                (Some(vector_text(vector)), Some(model.as_str()))
            }
            _ => (None, None),
        }
    }

    /// The vector and its model, when there is one.
    pub fn vector(&self) -> Option<(&str, &[f32])> {
        match self {
            WriteEmbedding::Vector { model, vector } => Some((model.as_str(), vector.as_slice())),
            _ => None,
        }
    }

    /// Records a failure against the stored row (`target` item, message or file) for the
    /// backfill; returns the error when there was one.
    pub fn record(&self, user: &str, target: &str, row_id: &str) -> Option<&str> {
        match self {
            WriteEmbedding::Failed { model, error } => {
                record_failure(user, target, row_id, model, error);
                Some(error.as_str())
            }
            _ => None,
        }
    }
}

/// Makes sure the model's registry row and HNSW indexes exist before a vector of it is stored
/// (as the extension owner: the registry is not the tenants', see src/pg/owner.rs). `Err` when
/// the registry is full: the caller stores the row without a vector and records why, so a
/// full registry never loses a write.
pub fn ensure_model(model: &ActiveModel, dims: usize) -> Result<(), String> {
    let registered = owner::as_owner(|| {
        spi::one_kept::<bool>(
            "SELECT memory._ensure_embedding_model($1, $2)",
            &[model.id.as_str().into(), (dims as i32).into()],
            "registering an embedding model",
        )
    });
    if registered == Some(false) {
        return Err(format!(
            "too many embedding models: \"{}\" is not registered (delete unused rows from memory.embedding_models)",
            model.id
        ));
    }
    Ok(())
}

/// A vector the caller supplied, taken as `model`'s (its size already checked).
pub fn supplied(model: &ActiveModel, vector: Vec<f32>) -> WriteEmbedding {
    match ensure_model(model, vector.len()) {
        Ok(()) => WriteEmbedding::Vector {
            model: model.id.clone(),
            vector,
        },
        Err(error) => WriteEmbedding::Failed {
            model: model.id.clone(),
            error,
        },
    }
}

/// Embeds `texts` for writes, in one provider call; one answer per text, in order. Never
/// raises (see the module comment).
pub fn for_writes(texts: &[&str]) -> Vec<WriteEmbedding> {
    if texts.is_empty() {
        return vec![];
    }
    if !gucs::embed_on_write() {
        return vec![WriteEmbedding::Deferred; texts.len()];
    }
    let model_id = embed::active_model()
        .map(|m| m.id)
        .unwrap_or_else(|_| "unconfigured".into());
    match embed::embed(texts) {
        Ok((model, vectors)) => {
            let mut vectors = vectors.into_iter();
            texts
                .iter()
                .map(|_| match vectors.next() {
                    Some(v) => supplied(&model, v),
                    None => WriteEmbedding::Failed {
                        model: model.id.clone(),
                        error: "provider returned no vector".into(),
                    },
                })
                .collect()
        }
        Err(e) => vec![
            WriteEmbedding::Failed {
                model: model_id,
                error: e.to_string(),
            };
            texts.len()
        ],
    }
}

/// [`for_writes`] for one text.
pub fn for_write(text: &str) -> WriteEmbedding {
    for_writes(&[text])
        .pop()
        .unwrap_or(WriteEmbedding::Deferred)
}

/// Base delay before the backfill retries a failed row, doubled per attempt, capped at 1 h:
/// 60 s, 2, 4, 8 min ... so a provider outage of a quarter of an hour costs 5 attempts.
const RETRY_BASE_SECONDS: i32 = 60;

/// Records (or counts another) failed embedding of a row; the row gives up after
/// `memory_ext.embedding_max_attempts`.
pub fn record_failure(user: &str, target: &str, row_id: &str, model: &str, error: &str) {
    spi::run(
        include_str!("../../sql/queries/embed_failure.sql"),
        &[
            user.into(),
            target.into(),
            row_id.into(),
            model.into(),
            error.into(),
            RETRY_BASE_SECONDS.into(),
            gucs::embedding_max_attempts().into(),
        ],
        "recording an embedding failure",
    );
}
