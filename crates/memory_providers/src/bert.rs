//! A lean BERT forward pass on packed sequences, for the built-in models: the embedders
//! (crate::embed::builtin) and the reranker (crate::rerank).
//!
//! # Why not candle-transformers' `BertModel`
//! A cross-encoder reads a handful of short pairs per query, and there candle's model spent
//! about 40% of its time outside the matrix products (rerank_speed: 114 ms p50 for 5 pairs of
//! ~42 tokens, of which the linear layers' products are ~70 ms at the gemm crate's speed):
//! padding every pair to the batch's longest, a mask over it, one small product per pair and
//! head for attention, a scalar `erf` per element of the feed-forward layer, and a new tensor
//! for every step. Here the pairs are packed one after another with no padding (each attends
//! only to itself), the linear layers are one gemm call each over every token, attention is a
//! loop per (pair, head) spread over rayon's threads, and GELU uses a rational `erf` that
//! vectorises. Same weights, same arithmetic up to float rounding: the models' tests compare it
//! with the numpy reference to 1e-4 per dimension (tests/builtin.rs) and 1e-3 per logit
//! (tests/rerank.rs). Embedding one short query went from 12.7 to 6.7 ms with it, reranking five
//! memories from 114 to 54 ms (docs/performance.md).

use crate::embed::EmbedError;
use candle_nn::VarBuilder;
use rayon::prelude::*;
use serde::Deserialize;

/// The parts of a Hugging Face BERT config.json this forward pass reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    vocab_size: usize,
    #[serde(default = "default_types")]
    type_vocab_size: usize,
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f32,
    #[serde(default = "default_act")]
    hidden_act: String,
    /// `"q4_0"`: the word embeddings are stored 4-bit (`embeddings.word_embeddings.q4_0`, see
    /// [`Words`]); absent: float32 `embeddings.word_embeddings.weight`.
    #[serde(default)]
    word_embeddings: Option<String>,
}

fn default_types() -> usize {
    2
}

fn default_eps() -> f32 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

/// A linear layer with the checkpoint's weights as stored: (out, in), row-major.
pub(crate) struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    n_in: usize,
    n_out: usize,
}

impl Dense {
    pub(crate) fn load(vb: VarBuilder, n_in: usize, n_out: usize) -> candle_core::Result<Self> {
        Ok(Dense {
            w: vb.get((n_out, n_in), "weight")?.flatten_all()?.to_vec1()?,
            b: vb.get(n_out, "bias")?.to_vec1()?,
            n_in,
            n_out,
        })
    }

    /// Several layers that read the same input as one (their outputs side by side): the query,
    /// key and value projections become one product.
    fn concat(parts: Vec<Dense>) -> Dense {
        let n_in = parts[0].n_in;
        let mut d = Dense {
            w: vec![],
            b: vec![],
            n_in,
            n_out: 0,
        };
        for p in parts {
            debug_assert_eq!(p.n_in, n_in);
            d.w.extend(p.w);
            d.b.extend(p.b);
            d.n_out += p.n_out;
        }
        d
    }

    /// `x` (rows × n_in) times the weights, plus the bias, plus `residual` when given.
    pub(crate) fn forward(&self, x: &[f32], residual: Option<&[f32]>) -> Vec<f32> {
        let rows = x.len() / self.n_in;
        let mut y = match residual {
            Some(r) => r.to_vec(),
            None => vec![0.0; rows * self.n_out],
        };
        for row in y.chunks_exact_mut(self.n_out) {
            for (v, b) in row.iter_mut().zip(&self.b) {
                *v += b;
            }
        }
        let threads = rayon::current_num_threads();
        let par = if threads > 1 {
            gemm::Parallelism::Rayon(threads)
        } else {
            gemm::Parallelism::None
        };
        // SAFETY: every pointer covers its matrix with the strides given: y is rows × n_out
        // row-major, x rows × n_in row-major, and the weights (n_out × n_in, row-major) read
        // as the n_in × n_out right-hand side (column stride n_in, row stride 1).
        unsafe {
            gemm::gemm(
                rows,
                self.n_out,
                self.n_in,
                y.as_mut_ptr(),
                1,
                self.n_out as isize,
                true,
                x.as_ptr(),
                1,
                self.n_in as isize,
                self.w.as_ptr(),
                self.n_in as isize,
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                par,
            );
        }
        y
    }
}

struct Norm {
    g: Vec<f32>,
    b: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(vb: VarBuilder, n: usize, eps: f32) -> candle_core::Result<Self> {
        Ok(Norm {
            g: vb.get(n, "weight")?.to_vec1()?,
            b: vb.get(n, "bias")?.to_vec1()?,
            eps,
        })
    }

    /// Layer normalisation of every row of `x`, in place.
    fn apply(&self, x: &mut [f32]) {
        let n = self.g.len();
        for row in x.chunks_exact_mut(n) {
            let mean = sum(row) / n as f32;
            for v in row.iter_mut() {
                *v -= mean;
            }
            let var = dot(row, row) / n as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.g).zip(&self.b) {
                *v = *v * inv * g + b;
            }
        }
    }
}

struct Layer {
    qkv: Dense,
    out: Dense,
    ln1: Norm,
    up: Dense,
    down: Dense,
    ln2: Norm,
}

/// The word embeddings: float32 rows, or 4-bit ones (multilingual-e5-small's 250,037 x 384 are
/// 384 MB as float32 and 54 MB as stored: scripts/e5_weights.py), dequantised a row at a time
/// when a token needs it, exactly as stored (Q4_0: per 32 values an fp16 scale `d`, then 16
/// bytes whose low nibble is value j and high nibble value j + 16, each `(q - 8) * d`).
enum Words {
    F32(Vec<f32>),
    Q4 { raw: Vec<u8>, row: usize },
}

impl Words {
    fn rows(&self, h: usize) -> usize {
        match self {
            Words::F32(w) => w.len() / h,
            Words::Q4 { raw, row } => raw.len() / row,
        }
    }

    /// Adds row `id` into `out` (of the hidden size).
    fn add_row(&self, id: usize, out: &mut [f32]) {
        match self {
            Words::F32(w) => {
                let h = out.len();
                out.iter_mut()
                    .zip(&w[id * h..][..h])
                    .for_each(|(o, x)| *o += x);
            }
            Words::Q4 { raw, row } => {
                for (block, o) in raw[id * row..][..*row]
                    .chunks_exact(18)
                    .zip(out.chunks_exact_mut(32))
                {
                    let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
                    for (j, q) in block[2..].iter().enumerate() {
                        o[j] += ((q & 0x0F) as f32 - 8.0) * d;
                        o[j + 16] += ((q >> 4) as f32 - 8.0) * d;
                    }
                }
            }
        }
    }
}

fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

pub(crate) struct Bert {
    hidden: usize,
    heads: usize,
    max_positions: usize,
    word: Words,
    position: Vec<f32>,
    token_type: Vec<f32>,
    types: usize,
    ln: Norm,
    layers: Vec<Layer>,
}

impl Bert {
    /// The encoder under `vb` (the checkpoint's `embeddings.*` and `encoder.layer.N.*`).
    pub(crate) fn load(vb: VarBuilder, c: &Config) -> Result<Self, String> {
        if c.hidden_act != "gelu" {
            return Err(format!("hidden_act {:?} is not supported", c.hidden_act));
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return Err("hidden_size is not a multiple of num_attention_heads".into());
        }
        (|| {
            let h = c.hidden_size;
            let e = vb.pp("embeddings");
            let word = match c.word_embeddings.as_deref() {
                Some("q4_0") => {
                    if !h.is_multiple_of(32) {
                        candle_core::bail!(
                            "4-bit word embeddings need a hidden size that is a multiple of 32"
                        );
                    }
                    let row = h / 32 * 18;
                    let raw = e.pp("word_embeddings").get_with_hints_dtype(
                        (c.vocab_size, row),
                        "q4_0",
                        Default::default(),
                        candle_core::DType::U8,
                    )?;
                    Words::Q4 {
                        raw: raw.flatten_all()?.to_vec1::<u8>()?,
                        row,
                    }
                }
                Some(other) => candle_core::bail!("word_embeddings {other:?} is not supported"),
                None => Words::F32(
                    e.pp("word_embeddings")
                        .get((c.vocab_size, h), "weight")?
                        .flatten_all()?
                        .to_vec1()?,
                ),
            };
            let types = e
                .pp("token_type_embeddings")
                .get((c.type_vocab_size, h), "weight")?;
            let mut layers = vec![];
            for i in 0..c.num_hidden_layers {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                let qkv = Dense::concat(vec![
                    Dense::load(a.pp("self.query"), h, h)?,
                    Dense::load(a.pp("self.key"), h, h)?,
                    Dense::load(a.pp("self.value"), h, h)?,
                ]);
                layers.push(Layer {
                    qkv,
                    out: Dense::load(a.pp("output.dense"), h, h)?,
                    ln1: Norm::load(a.pp("output.LayerNorm"), h, c.layer_norm_eps)?,
                    up: Dense::load(l.pp("intermediate.dense"), h, c.intermediate_size)?,
                    down: Dense::load(l.pp("output.dense"), c.intermediate_size, h)?,
                    ln2: Norm::load(l.pp("output.LayerNorm"), h, c.layer_norm_eps)?,
                });
            }
            Ok::<_, candle_core::Error>(Bert {
                hidden: h,
                heads: c.num_attention_heads,
                max_positions: c.max_position_embeddings,
                word,
                position: e
                    .pp("position_embeddings")
                    .get((c.max_position_embeddings, h), "weight")?
                    .flatten_all()?
                    .to_vec1()?,
                token_type: types.flatten_all()?.to_vec1()?,
                types: c.type_vocab_size,
                ln: Norm::load(e.pp("LayerNorm"), h, c.layer_norm_eps)?,
                layers,
            })
        })()
        .map_err(|e| e.to_string())
    }

    pub(crate) fn hidden(&self) -> usize {
        self.hidden
    }

    /// The last layer's states of tokenised inputs (each with its token and segment ids).
    pub(crate) fn run(&self, encodings: &[tokenizers::Encoding]) -> Result<States, EmbedError> {
        let seqs: Vec<(&[u32], &[u32])> = encodings
            .iter()
            .map(|e| (e.get_ids(), e.get_type_ids()))
            .collect();
        self.forward(&seqs)
    }

    /// The last layer's state of every token of `seqs` (token ids and segment ids of each
    /// sequence).
    pub(crate) fn forward(&self, seqs: &[(&[u32], &[u32])]) -> Result<States, EmbedError> {
        let h = self.hidden;
        let vocab = self.word.rows(h);
        let mut spans = Vec::with_capacity(seqs.len());
        let mut x = Vec::new();
        for (ids, types) in seqs {
            if ids.len() > self.max_positions || types.len() != ids.len() {
                return Err(EmbedError::Inference(format!(
                    "a sequence of {} tokens ({} segment ids) for a model of {} positions",
                    ids.len(),
                    types.len(),
                    self.max_positions
                )));
            }
            spans.push((x.len() / h, ids.len()));
            for (p, (&id, &t)) in ids.iter().zip(types.iter()).enumerate() {
                let (id, t) = (id as usize, t as usize);
                if id >= vocab || t >= self.types {
                    return Err(EmbedError::Inference(format!(
                        "token {id} / segment {t} out of the model's range"
                    )));
                }
                let pos = &self.position[p * h..][..h];
                let ty = &self.token_type[t * h..][..h];
                let start = x.len();
                x.extend(pos.iter().zip(ty).map(|(b, c)| b + c));
                self.word.add_row(id, &mut x[start..]);
            }
        }
        self.ln.apply(&mut x);
        for l in &self.layers {
            let qkv = l.qkv.forward(&x, None);
            let ctx = attention(&qkv, &spans, h, self.heads);
            let mut a = l.out.forward(&ctx, Some(&x));
            l.ln1.apply(&mut a);
            let mut u = l.up.forward(&a, None);
            u.par_chunks_mut(4096).for_each(gelu_all);
            x = l.down.forward(&u, Some(&a));
            l.ln2.apply(&mut x);
        }
        Ok(States {
            x,
            spans,
            hidden: h,
        })
    }
}

/// A forward pass's output: every token's state, the inputs one after another.
pub(crate) struct States {
    /// (total tokens × hidden), row-major.
    x: Vec<f32>,
    /// Each input's first token and length.
    spans: Vec<(usize, usize)>,
    hidden: usize,
}

impl States {
    /// Input `i`'s token states: (its tokens × hidden), row-major; its [CLS] state first.
    pub(crate) fn input(&self, i: usize) -> &[f32] {
        let (o, len) = self.spans[i];
        &self.x[o * self.hidden..(o + len) * self.hidden]
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }
}

/// Self-attention of each sequence over its own tokens only. `qkv` holds, per token, its
/// query, key and value (3 × hidden); `spans` each sequence's first token and length.
fn attention(qkv: &[f32], spans: &[(usize, usize)], hidden: usize, heads: usize) -> Vec<f32> {
    let d = hidden / heads;
    let scale = 1.0 / (d as f32).sqrt();
    let stride = 3 * hidden;
    let tasks: Vec<(usize, usize)> = (0..spans.len())
        .flat_map(|s| (0..heads).map(move |hd| (s, hd)))
        .collect();
    let parts: Vec<Vec<f32>> = tasks
        .par_iter()
        .map(|&(s, hd)| {
            let (o, len) = spans[s];
            let at = (o * stride + hd * d, stride, hidden);
            attend(qkv, at, len, d, scale)
        })
        .collect();
    let total = spans.last().map_or(0, |&(o, l)| o + l);
    let mut ctx = vec![0.0f32; total * hidden];
    for (&(s, hd), part) in tasks.iter().zip(&parts) {
        let (o, len) = spans[s];
        for i in 0..len {
            ctx[(o + i) * hidden + hd * d..][..d].copy_from_slice(&part[i * d..(i + 1) * d]);
        }
    }
    ctx
}

/// One head of one sequence: `at` is (where its first token's query starts, the stride from
/// token to token, the offset from query to key and key to value).
#[inline(always)]
fn attend_one(
    qkv: &[f32],
    (start, stride, step): (usize, usize, usize),
    len: usize,
    d: usize,
    scale: f32,
) -> Vec<f32> {
    let row = |i: usize, which: usize| &qkv[start + i * stride + which * step..][..d];
    let mut out = vec![0.0f32; len * d];
    let mut p = vec![0.0f32; len];
    for i in 0..len {
        let q = row(i, 0);
        let mut max = f32::NEG_INFINITY;
        for (j, pj) in p.iter_mut().enumerate() {
            *pj = dot(q, row(j, 1)) * scale;
            max = max.max(*pj);
        }
        let mut total = 0.0;
        for pj in p.iter_mut() {
            *pj = (*pj - max).exp();
            total += *pj;
        }
        let o_row = &mut out[i * d..(i + 1) * d];
        for (j, pj) in p.iter().enumerate() {
            let w = pj / total;
            for (a, v) in o_row.iter_mut().zip(row(j, 2)) {
                *a += w * v;
            }
        }
    }
    out
}

fn gelu_all(c: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU has AVX2 and FMA (`wide`).
        return unsafe { gelu_all_wide(c) };
    }
    gelu_each(c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gelu_all_wide(c: &mut [f32]) {
    gelu_each(c)
}

#[inline(always)]
fn gelu_each(c: &mut [f32]) {
    c.iter_mut().for_each(gelu)
}

fn attend(qkv: &[f32], at: (usize, usize, usize), len: usize, d: usize, scale: f32) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU has AVX2 and FMA (`wide`).
        return unsafe { attend_wide(qkv, at, len, d, scale) };
    }
    attend_one(qkv, at, len, d, scale)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn attend_wide(
    qkv: &[f32],
    at: (usize, usize, usize),
    len: usize,
    d: usize,
    scale: f32,
) -> Vec<f32> {
    attend_one(qkv, at, len, d, scale)
}

/// Whether the loops of attention and GELU (the time outside the gemm calls) can be compiled
/// for AVX2 and FMA, 8 lanes, instead of the crate's baseline x86-64 (SSE2, 4 lanes); checked
/// at run time, as gemm does for its own kernels.
#[cfg(target_arch = "x86_64")]
fn wide() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

/// Sum with eight running lanes, so that the compiler can vectorise it (a single running f32
/// sum has to be added in order).
#[inline(always)]
fn sum(a: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let chunks = a.chunks_exact(8);
    let rest: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (s, v) in acc.iter_mut().zip(c) {
            *s += v;
        }
    }
    acc.iter().sum::<f32>() + rest
}

#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let rest: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + rest
}

#[inline(always)]
/// GELU as BERT was trained with it, x·Φ(x) with the exact `erf` (not the tanh form).
fn gelu(x: &mut f32) {
    *x *= 0.5 * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
}

/// `erf` for f32 as a ratio of two polynomials over [-4, 4] (beyond which erf is ±1 in f32):
/// the approximation Eigen and XLA use, within a few 1e-7 of libm's and branch-free, so a loop
/// over it vectorises.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    for c in [
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_600_1e-3,
        -1.609_603_3e-2,
    ] {
        p = p * x2 + c;
    }
    let mut q = -1.456_607_2e-5_f32;
    for c in [-2.133_740_6e-4, -1.682_827e-3, -7.373_329e-3, -1.426_474e-2] {
        q = q * x2 + c;
    }
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_libm() {
        let mut worst = 0.0f32;
        for i in -6000..=6000 {
            let x = i as f32 / 1000.0;
            let want = libm_erf(x as f64) as f32;
            worst = worst.max((erf(x) - want).abs());
        }
        assert!(worst < 2e-6, "worst {worst}");
    }

    /// erf by its series / continued fraction in f64, as an independent reference.
    fn libm_erf(x: f64) -> f64 {
        // Abramowitz-Stegun 7.1.26 is too coarse for a reference; sum the Taylor series where it
        // converges fast and use erfc's continued fraction beyond.
        if x.abs() < 3.0 {
            let mut term = x;
            let mut total = x;
            for n in 1..200 {
                term *= -x * x / n as f64;
                total += term / (2 * n + 1) as f64;
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            let s = x.signum();
            let x = x.abs();
            // erfc(x) = exp(-x²)/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...))))
            let mut f = 0.0;
            for k in (1..100).rev() {
                f = (k as f64 / 2.0) / (x + f);
            }
            s * (1.0 - (-x * x).exp() / std::f64::consts::PI.sqrt() / (x + f))
        }
    }

    /// A two-layer BERT of random weights, small enough to build here.
    fn tiny() -> Bert {
        use candle_core::{DType, Device, Tensor};
        let c: Config = serde_json::from_value(serde_json::json!({
            "vocab_size": 30, "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2,
            "intermediate_size": 16, "max_position_embeddings": 12
        }))
        .unwrap();
        let mut t = std::collections::HashMap::new();
        let mut seed = 7u64;
        let mut put = |name: String, shape: &[usize]| {
            let n: usize = shape.iter().product();
            let v: Vec<f32> = (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.8
                })
                .collect();
            t.insert(name, Tensor::from_vec(v, shape, &Device::Cpu).unwrap());
        };
        put("embeddings.word_embeddings.weight".into(), &[30, 8]);
        put("embeddings.position_embeddings.weight".into(), &[12, 8]);
        put("embeddings.token_type_embeddings.weight".into(), &[2, 8]);
        put("embeddings.LayerNorm.weight".into(), &[8]);
        put("embeddings.LayerNorm.bias".into(), &[8]);
        for l in 0..2 {
            let p = format!("encoder.layer.{l}");
            for (n, o, i) in [
                ("attention.self.query", 8, 8),
                ("attention.self.key", 8, 8),
                ("attention.self.value", 8, 8),
                ("attention.output.dense", 8, 8),
                ("intermediate.dense", 16, 8),
                ("output.dense", 8, 16),
            ] {
                put(format!("{p}.{n}.weight"), &[o, i]);
                put(format!("{p}.{n}.bias"), &[o]);
            }
            for n in ["attention.output.LayerNorm", "output.LayerNorm"] {
                put(format!("{p}.{n}.weight"), &[8]);
                put(format!("{p}.{n}.bias"), &[8]);
            }
        }
        Bert::load(VarBuilder::from_tensors(t, DType::F32, &Device::Cpu), &c).unwrap()
    }

    #[test]
    fn packed_inputs_do_not_see_each_other() {
        let m = tiny();
        let a: (&[u32], &[u32]) = (&[1, 5, 9, 2], &[0, 0, 1, 1]);
        let b: (&[u32], &[u32]) = (&[1, 7, 2], &[0, 0, 0]);
        let both = m.forward(&[a, b]).unwrap().x;
        let alone = [m.forward(&[a]).unwrap().x, m.forward(&[b]).unwrap().x].concat();
        assert_eq!(both.len(), 7 * 8);
        for (x, y) in both.iter().zip(&alone) {
            assert!((x - y).abs() < 1e-5, "{x} vs {y}");
        }
        // and the second input's states are not the first's: attention did run per input
        assert!((both[0] - both[4 * 8]).abs() > 1e-3 || (both[1] - both[4 * 8 + 1]).abs() > 1e-3);
    }

    #[test]
    fn inputs_out_of_the_models_range_are_errors() {
        let m = tiny();
        assert!(
            m.forward(&[(&[1, 30], &[0, 0])]).is_err(),
            "token id past the vocabulary"
        );
        assert!(
            m.forward(&[(&[1, 2], &[0, 2])]).is_err(),
            "segment past the types"
        );
        assert!(
            m.forward(&[(&[1; 13], &[0; 13])]).is_err(),
            "longer than the positions"
        );
        assert!(
            m.forward(&[(&[1, 2], &[0])]).is_err(),
            "ids and segments disagree"
        );
        assert_eq!(m.forward(&[]).unwrap().len(), 0);
    }

    #[test]
    fn sums_and_dots_count_every_element() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        assert_eq!(sum(&a), 171.0);
        assert_eq!(dot(&a, &a), (0..19).map(|i| (i * i) as f32).sum::<f32>());
    }
}
