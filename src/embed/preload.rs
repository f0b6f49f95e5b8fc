//! What a new backend would otherwise load on its first call, loaded once in the postmaster
//! while it loads `shared_preload_libraries`, before it forks anything: the built-in embedding
//! model the settings name (weights and tokenizer, ~100 MB for MiniLM), the token encoding
//! (tiktoken's ranks, 25-45 MB), and the reranker when `memory_ext.rerank` is on.
//!
//! # Why in the postmaster
//! Each backend loaded the model on its first embedding: 200-370 ms on a new connection, and
//! 50 backends held 50 copies of the weights. Applications behind a transaction pooler, or
//! without a pool, pay that on every new backend. Loaded before the fork, the pages are the
//! same physical memory in every backend (copy-on-write: nothing writes the weights), and a
//! new connection's first call costs what its second does. Loading reads files and parses
//! them on the postmaster's one thread: no thread is started here (the forward pass's threads
//! start in a backend, on first use), and nothing here can stop the server: a model that is
//! missing or fails to load is logged, and backends load theirs on first use as before.
//!
//! Without `memory_ext` in `shared_preload_libraries` nothing is preloaded (and the worker
//! does not run either): each backend loads on first use.

use super::{builtin_spec, model_dir};
use crate::gucs::{self, EmbeddingProvider};
use memory_providers::embed::builtin::Encoder;
use memory_providers::rerank::{CrossEncoder, MODEL_NAME};
use pgrx::pg_sys;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

static ENCODER: OnceLock<Arc<Encoder>> = OnceLock::new();
static RERANKER: OnceLock<Arc<CrossEncoder>> = OnceLock::new();

/// The model the postmaster loaded, if it did.
pub fn encoder() -> Option<Arc<Encoder>> {
    ENCODER.get().cloned()
}

/// The reranker the postmaster loaded, if it did.
pub fn reranker() -> Option<Arc<CrossEncoder>> {
    RERANKER.get().cloned()
}

/// Called from `_PG_init`; does its work only in the postmaster loading the library.
pub fn in_postmaster() {
    // SAFETY: a plain flag the postmaster sets while it loads shared_preload_libraries; read on
    // the only thread there is.
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    let started = Instant::now();
    let mut loaded = vec![];
    // A panic must not end the postmaster: whatever fails here is only not shared.
    let outcome = std::panic::catch_unwind(|| {
        let enc = gucs::token_encoding();
        enc.count("warm");
        loaded.push(enc.name().to_string());
        // Screening's detectors too (src/ops/screen.rs): every write runs them.
        memory_core::screen::warm();
        loaded.push("the screening detectors".to_string());
        if gucs::embedding_provider() == EmbeddingProvider::Builtin {
            let dir = model_dir();
            match super::with_signals_blocked(|| Encoder::load(&dir, builtin_spec())) {
                Ok(m) => {
                    let _ = ENCODER.set(Arc::new(m));
                    loaded.push(builtin_spec().name.to_string());
                }
                Err(e) => pgrx::log!("memory_ext: the built-in model was not preloaded: {e}"),
            }
        }
        if gucs::rerank() {
            let dir = super::models_dir().join(MODEL_NAME);
            match super::with_signals_blocked(|| CrossEncoder::load(&dir)) {
                Ok(m) => {
                    let _ = RERANKER.set(Arc::new(m));
                    loaded.push(MODEL_NAME.to_string());
                }
                Err(e) => pgrx::log!("memory_ext: the reranker was not preloaded: {e}"),
            }
        }
        loaded
    });
    match outcome {
        Ok(loaded) => pgrx::log!(
            "memory_ext: preloaded {} in {} ms; backends share them",
            loaded.join(", "),
            started.elapsed().as_millis()
        ),
        Err(_) => {
            pgrx::log!("memory_ext: preloading failed; backends load their models on first use")
        }
    }
}
