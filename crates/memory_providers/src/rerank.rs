//! The built-in reranker: ms-marco-MiniLM-L-12-v2, a BERT cross-encoder that reads the query and
//! a memory together ("[CLS] query [SEP] text [SEP]") and returns one relevance logit. It sees
//! both texts at once, so it judges what an embedding, made of each text alone, cannot; it costs
//! one forward pass per candidate, so the search applies it to the top of the fused pool only
//! (src/store/search/, docs/retrieval.md). Weights: `make deps` (scripts/deps.sh).

use crate::embed::builtin::{inputs, load_bert, shortest_first};
use crate::embed::EmbedError;
use candle_core::Module;
use candle_nn::{linear, Linear};
use candle_transformers::models::bert::BertModel;
use std::path::Path;
use tokenizers::{EncodeInput, Tokenizer};

/// The model's directory name under `<sharedir>/extension/memory_ext/models/`.
pub const MODEL_NAME: &str = "ms-marco-MiniLM-L-12-v2";
/// Longest pair in tokens. Memories are short; a long one is cut from its end (longest first),
/// and the query keeps its tokens.
pub const MAX_TOKENS: usize = 256;
/// Pairs per forward pass.
const BATCH: usize = 16;
const HIDDEN: usize = 384;

pub struct CrossEncoder {
    bert: BertModel,
    pooler: Linear,
    classifier: Linear,
    tokenizer: Tokenizer,
}

impl CrossEncoder {
    /// Loads the model from `dir` (config.json, tokenizer.json, model.safetensors with
    /// `bert.*`, `bert.pooler.dense.*` and `classifier.*` weights).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let (bert, tokenizer, root) = load_bert(dir, "bert", MAX_TOKENS)?;
        let load_err = |e: candle_core::Error| EmbedError::ModelLoad {
            path: dir.display().to_string(),
            reason: e.to_string(),
        };
        let pooler = linear(HIDDEN, HIDDEN, root.pp("bert.pooler.dense")).map_err(load_err)?;
        let classifier = linear(HIDDEN, 1, root.pp("classifier")).map_err(load_err)?;
        Ok(CrossEncoder {
            bert,
            pooler,
            classifier,
            tokenizer,
        })
    }

    /// One relevance logit per text, in order (higher = more relevant; ms-marco logits run from
    /// about -11 to +11). Shortest first in batches, like the encoder (embed/builtin.rs).
    pub fn score(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>, EmbedError> {
        shortest_first(texts, BATCH, |batch| self.score_batch(query, batch))
    }

    fn score_batch(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let pairs: Vec<EncodeInput> = texts.iter().map(|t| (query, *t).into()).collect();
        let encodings = self
            .tokenizer
            .encode_batch(pairs, true)
            .map_err(|e| err(&e))?;
        let (ids, type_ids, mask) = inputs(&encodings)?;
        let logits = (|| {
            let hidden = self.bert.forward(&ids, &type_ids, Some(&mask))?;
            let cls = hidden.narrow(1, 0, 1)?.squeeze(1)?;
            let pooled = self.pooler.forward(&cls)?.tanh()?;
            self.classifier.forward(&pooled)?.squeeze(1)
        })()
        .map_err(|e| err(&e))?;
        logits.to_vec1().map_err(|e| err(&e))
    }
}

/// Token ids of a pair as the model sees them (for tests against the reference tokenizer).
pub fn pair_token_ids(m: &CrossEncoder, query: &str, text: &str) -> Result<Vec<u32>, EmbedError> {
    let mut t = m.tokenizer.clone();
    t.with_padding(None);
    let e = t
        .encode((query, text), true)
        .map_err(|e| EmbedError::Inference(e.to_string()))?;
    Ok(e.get_ids().to_vec())
}
