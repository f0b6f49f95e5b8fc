//! The built-in reranker for this backend: loaded on first use from
//! `<sharedir>/extension/memory_ext/models/ms-marco-MiniLM-L-12-v2` and kept, like the embedding
//! model (src/embed/mod.rs). Where its scores go: `memory_core::rank::rank_reranked`.

use super::{models_dir, set_builtin_threads, with_signals_blocked};
use memory_providers::embed::EmbedError;
use memory_providers::rerank::{CrossEncoder, MODEL_NAME};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// The postmaster's reranker when it preloaded one (src/embed/preload.rs), else this
    /// backend's, loaded on first use.
    static RERANKER: RefCell<Option<Arc<CrossEncoder>>> = const { RefCell::new(None) };
}

fn model() -> Result<Arc<CrossEncoder>, EmbedError> {
    RERANKER.with(|slot| {
        if let Some(m) = slot.borrow().as_ref() {
            return Ok(m.clone());
        }
        set_builtin_threads();
        if let Some(m) = super::preload::reranker() {
            *slot.borrow_mut() = Some(m.clone());
            return Ok(m);
        }
        let dir = models_dir().join(MODEL_NAME);
        let m = Arc::new(with_signals_blocked(|| CrossEncoder::load(&dir))?);
        *slot.borrow_mut() = Some(m.clone());
        Ok(m)
    })
}

/// Memories scored between two checks for a cancel: about 0.16 s of work on 2 cores.
const CHUNK: usize = 16;

/// The reranker's logit for each of `texts` against `query`, in order.
///
/// Signals are blocked while the model runs (`with_signals_blocked` says why), so a long
/// rerank (`memory_ext.rerank_depth` up to 100, ~1 s) is cut into chunks with a check for
/// a cancel or `statement_timeout` between them.
pub fn scores(query: &str, texts: &[&str]) -> Result<Vec<f32>, EmbedError> {
    if texts.is_empty() || query.trim().is_empty() {
        return Ok(vec![0.0; texts.len()]);
    }
    let m = model()?;
    let clipped: Vec<&str> = texts.iter().map(|t| super::clip(t)).collect();
    let mut out = Vec::with_capacity(clipped.len());
    for chunk in clipped.chunks(CHUNK) {
        out.extend(with_signals_blocked(|| m.score(query, chunk))?);
        pgrx::check_for_interrupts!();
    }
    Ok(out)
}
