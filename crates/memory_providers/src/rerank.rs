//! The built-in reranker: ms-marco-MiniLM-L-12-v2, a BERT cross-encoder that reads the query and
//! a memory together ("[CLS] query [SEP] text [SEP]") and returns one relevance logit. It sees
//! both texts at once, so it judges what an embedding, made of each text alone, cannot; it costs
//! one forward pass per candidate, so the search applies it to the top of the fused pool only
//! (src/ops/search/, docs/retrieval.md). Weights: `make deps` (scripts/deps.sh).

use crate::bert::{Bert, Dense};
use crate::embed::builtin::load_checkpoint;
use crate::embed::EmbedError;
use std::path::Path;
use tokenizers::{EncodeInput, Tokenizer};

/// The model's directory name under `<sharedir>/extension/memory_ext/models/`.
pub const MODEL_NAME: &str = "ms-marco-MiniLM-L-12-v2";
/// Longest pair in tokens. Memories are short; a long one is cut from its end (longest first),
/// and the query keeps its tokens.
pub const MAX_TOKENS: usize = 256;
/// Pairs per forward pass: they are packed without padding (crate::bert), so a batch only
/// bounds memory (16 pairs of 256 tokens: ~25 MB of activations).
const BATCH: usize = 16;

pub struct CrossEncoder {
    bert: Bert,
    pooler: Dense,
    classifier: Dense,
    tokenizer: Tokenizer,
}

impl CrossEncoder {
    /// Loads the model from `dir` (config.json, tokenizer.json, model.safetensors with
    /// `bert.*`, `bert.pooler.dense.*` and `classifier.*` weights).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let (config, tokenizer, root) = load_checkpoint(dir, MAX_TOKENS)?;
        let load_err = |reason: String| EmbedError::ModelLoad {
            path: dir.display().to_string(),
            reason,
        };
        let bert = Bert::load(root.pp("bert"), &config).map_err(load_err)?;
        let h = bert.hidden();
        let pooler =
            Dense::load(root.pp("bert.pooler.dense"), h, h).map_err(|e| load_err(e.to_string()))?;
        let classifier =
            Dense::load(root.pp("classifier"), h, 1).map_err(|e| load_err(e.to_string()))?;
        Ok(CrossEncoder {
            bert,
            pooler,
            classifier,
            tokenizer,
        })
    }

    /// One relevance logit per text, in order (higher = more relevant; ms-marco logits run from
    /// about -11 to +11).
    pub fn score(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            out.extend(self.score_batch(query, batch)?);
        }
        Ok(out)
    }

    fn score_batch(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let pairs: Vec<EncodeInput> = texts.iter().map(|t| (query, *t).into()).collect();
        let encodings = self
            .tokenizer
            .encode_batch(pairs, true)
            .map_err(|e| err(&e))?;
        let states = self.bert.run(&encodings)?;
        // Each pair's [CLS] state (its first token), through the pooler and the classifier.
        let h = self.bert.hidden();
        let cls: Vec<f32> = (0..states.len())
            .flat_map(|i| states.input(i)[..h].iter().copied())
            .collect();
        let mut pooled = self.pooler.forward(&cls, None);
        pooled.iter_mut().for_each(|v| *v = v.tanh());
        Ok(self.classifier.forward(&pooled, None))
    }
}

/// Token ids of a pair as the model sees them (for tests against the reference tokenizer).
pub fn pair_token_ids(m: &CrossEncoder, query: &str, text: &str) -> Result<Vec<u32>, EmbedError> {
    let e = m
        .tokenizer
        .encode((query, text), true)
        .map_err(|e| EmbedError::Inference(e.to_string()))?;
    Ok(e.get_ids().to_vec())
}
