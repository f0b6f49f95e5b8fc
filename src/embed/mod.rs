//! Embeddings: the provider as the `memory_ext.embedding_*` settings configure it, for this
//! backend (which model is active, and text -> vectors through it, here), the write path's
//! vectors (`write`) and the backfill that re-embeds (`reembed`). The providers themselves are
//! in crates/memory_providers/src/embed/.
//!
//! # Model ids
//! Every stored vector records the model that made it (`embedding_model`): `builtin:<name>`,
//! `openai:<model>` or `ollama:<model>`. Retrieval compares only vectors of the active model, and
//! the backfill re-embeds rows of any other model, so a switch loses nothing and needs no downtime.

pub mod preload;
pub mod reembed;
pub mod write;

use crate::gucs::{self, BuiltinModel, EmbeddingProvider};
pub mod rerank;

use memory_core::cosine::Scale;
use memory_providers::embed::builtin::{self, Encoder, Spec};
use memory_providers::embed::http::{self, Api, HttpConfig};
use memory_providers::embed::EmbedError;
use pgrx::pg_sys;
use std::cell::RefCell;
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::Arc;

/// Longest input passed to a provider, in characters. The built-in model reads 256 tokens
/// (~1,000-1,500 characters) and OpenAI's models 8,191 tokens; tokenising a 1 MB message only
/// to drop most of it would be waste.
pub const MAX_INPUT_CHARS: usize = 8_192;
/// Inputs per HTTP request.
const HTTP_BATCH: usize = 64;
/// Retries of an HTTP batch on 429/5xx (after the first attempt).
const HTTP_RETRIES: u32 = 2;

/// The model the settings select.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveModel {
    pub id: String,
    /// Known in advance for the built-in model and when `memory_ext.embedding_dims` is set.
    pub dims: Option<usize>,
}

impl ActiveModel {
    /// Its dimensions when known before embedding anything: the built-in model's, the
    /// setting's, or those the registry recorded for it.
    pub fn known_dims(&self) -> Option<usize> {
        self.dims.or_else(|| {
            crate::pg::spi::one_opt::<i32>(
                "SELECT dims FROM memory.embedding_models WHERE model_id = $1",
                &[self.id.as_str().into()],
                "reading a model's dimensions",
            )
            .map(|d| d as usize)
        })
    }

    /// A caller-supplied vector (request field `embedding`) is taken as this model's: 22023 when
    /// its size does not match.
    pub fn check_supplied(&self, v: &[f32]) {
        if let Some(d) = self.known_dims().filter(|d| *d != v.len()) {
            crate::error::raise(
                memory_core::SqlState::InvalidParameterValue,
                format!(
                    "invalid \"embedding\": has {} dimensions, the active model {} has {d}",
                    v.len(),
                    self.id
                ),
                None,
            );
        }
    }
}

pub fn active_model() -> Result<ActiveModel, EmbedError> {
    let configured_dims = Some(gucs::embedding_dims()).filter(|d| *d > 0);
    match gucs::embedding_provider() {
        EmbeddingProvider::Builtin => Ok(ActiveModel {
            id: format!("builtin:{}", builtin_spec().name),
            dims: Some(builtin::DIMS),
        }),
        EmbeddingProvider::OpenAi | EmbeddingProvider::Ollama => {
            let prefix = if gucs::embedding_provider() == EmbeddingProvider::OpenAi {
                "openai"
            } else {
                "ollama"
            };
            let model = gucs::embedding_model()
                .ok_or_else(|| EmbedError::Config("memory_ext.embedding_model is empty".into()))?;
            Ok(ActiveModel {
                id: format!("{prefix}:{model}"),
                dims: configured_dims,
            })
        }
    }
}

/// Vectors for stored `texts` from the active model, with the model's id. A built-in model
/// trained with a passage prefix gets it (`Spec::passage_prefix`).
pub fn embed(texts: &[&str]) -> Result<(ActiveModel, Vec<Vec<f32>>), EmbedError> {
    embed_as(texts, builtin_spec().passage_prefix)
}

/// `texts` from the active model, a built-in model's texts after `prefix`.
fn embed_as(texts: &[&str], prefix: &str) -> Result<(ActiveModel, Vec<Vec<f32>>), EmbedError> {
    let model = active_model()?;
    let clipped: Vec<&str> = texts.iter().map(|t| clip(t)).collect();
    let vectors = match gucs::embedding_provider() {
        EmbeddingProvider::Builtin => {
            let m = builtin_model()?;
            let spec = builtin_spec();
            // A text that already carries one of the model's prefixes is embedded as written:
            // `memory_embed('query: ...')` is how a caller asks e5 for a query's vector.
            let marked = |t: &str| {
                (!spec.query_prefix.is_empty() && t.starts_with(spec.query_prefix))
                    || (!spec.passage_prefix.is_empty() && t.starts_with(spec.passage_prefix))
            };
            if prefix.is_empty() || clipped.iter().all(|t| marked(t)) {
                with_signals_blocked(|| m.embed(&clipped))?
            } else {
                let owned: Vec<String> = clipped
                    .iter()
                    .map(|t| {
                        if marked(t) {
                            t.to_string()
                        } else {
                            format!("{prefix}{t}")
                        }
                    })
                    .collect();
                let with: Vec<&str> = owned.iter().map(String::as_str).collect();
                with_signals_blocked(|| m.embed(&with))?
            }
        }
        EmbeddingProvider::OpenAi => http::embed(&http_config(Api::OpenAi), &clipped)?,
        EmbeddingProvider::Ollama => http::embed(&http_config(Api::Ollama), &clipped)?,
    };
    Ok((model, vectors))
}

/// A search query's vector with its model; `None` for an empty query. A built-in model trained
/// with a query instruction gets it (`Spec::query_prefix`); stored texts never do.
pub fn embed_query(text: &str) -> Result<Option<(ActiveModel, Vec<f32>)>, EmbedError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let (m, mut v) = embed_as(&[text], builtin_spec().query_prefix)?;
    Ok(v.pop().map(|v| (m, v)))
}

/// A search's query vector, or `None` with a NOTICE (`"<what>: <error>"`) when the provider
/// fails: a provider that is down degrades a search to keyword-only, it does not fail it.
///
/// Remembered for the rest of the statement: memory_query over spaces (src/ops/query.rs) ranks
/// each space with the same query, and must not embed it, or wait for a provider that is down,
/// once per space.
pub fn query_vector(query: &str, what: &str) -> Option<(ActiveModel, Vec<f32>)> {
    thread_local! {
        static LAST: crate::pg::statement::Memo<String, Option<(ActiveModel, Vec<f32>)>> =
            const { crate::pg::statement::Memo::new() };
    }
    LAST.with(|m| {
        m.with(
            query.to_string(),
            |q| match embed_query(q) {
                Ok(v) => v,
                Err(e) => {
                    pgrx::notice!("{what}: {e}");
                    None
                }
            },
            Clone::clone,
        )
    })
}

pub(crate) fn clip(t: &str) -> &str {
    match t.char_indices().nth(MAX_INPUT_CHARS) {
        Some((i, _)) => &t[..i],
        None => t,
    }
}

fn http_config(api: Api) -> HttpConfig {
    HttpConfig {
        api,
        url: gucs::embedding_url().unwrap_or_default(),
        model: gucs::embedding_model().unwrap_or_default(),
        dims: gucs::embedding_dims(),
        api_key: gucs::embedding_api_key(),
        timeout_ms: gucs::http_timeout_ms(),
        max_retries: HTTP_RETRIES,
        batch: HTTP_BATCH,
    }
}

/// The built-in model `memory_ext.builtin_model` names.
pub fn builtin_spec() -> Spec {
    match gucs::builtin_model() {
        BuiltinModel::MiniLm => builtin::MINILM,
        BuiltinModel::BgeSmall => builtin::BGE_SMALL,
        BuiltinModel::MultilingualE5 => builtin::MULTILINGUAL_E5,
    }
}

/// How `model_id`'s cosines between stored texts sit on the reference scale
/// (memory_core::cosine): a built-in model's measured scale, the plain cosine for providers'
/// models, which were not measured.
pub fn scale_of(model_id: &str) -> Scale {
    builtin_of(model_id).map_or(Scale::REFERENCE, |m| m.scale)
}

/// The same for a query's cosine to a stored text (searches).
pub fn query_scale_of(model_id: &str) -> Scale {
    builtin_of(model_id).map_or(Scale::REFERENCE, |m| m.query_scale)
}

fn builtin_of(model_id: &str) -> Option<&'static Spec> {
    model_id
        .strip_prefix("builtin:")
        .and_then(|name| builtin::MODELS.iter().find(|m| m.name == name))
}

/// `memory_ext.model_path`, or `<sharedir>/extension/memory_ext/models/<active model>`.
pub fn model_dir() -> PathBuf {
    if let Some(p) = gucs::model_path() {
        return PathBuf::from(p);
    }
    models_dir().join(builtin_spec().name)
}

/// `<sharedir>/extension/memory_ext/models`, where `make deps` installs the built-in models.
pub fn models_dir() -> PathBuf {
    let mut buf = [0 as std::ffi::c_char; pg_sys::MAXPGPATH as usize];
    // SAFETY: my_exec_path is the server's own NUL-terminated path, set at startup and never
    // written afterwards; get_share_path writes at most MAXPGPATH bytes, NUL-terminated, into
    // `buf`, which is exactly that large.
    let share = unsafe {
        pg_sys::get_share_path(
            std::ptr::addr_of!(pg_sys::my_exec_path).cast(),
            buf.as_mut_ptr(),
        );
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    };
    PathBuf::from(share).join("extension/memory_ext/models")
}

thread_local! {
    /// The model this backend uses: the one the postmaster loaded before forking it, shared
    /// with every other backend (src/embed/preload.rs), or, when that is not the one the
    /// settings name, one loaded on first use (0.1-0.35 s, ~100 MB) and kept.
    static BUILTIN: RefCell<Option<Arc<Encoder>>> = const { RefCell::new(None) };
}

fn builtin_model() -> Result<Arc<Encoder>, EmbedError> {
    let dir = model_dir();
    let spec = builtin_spec();
    BUILTIN.with(|slot| {
        if let Some(m) = slot
            .borrow()
            .as_ref()
            .filter(|m| m.path() == dir && m.spec() == spec)
        {
            return Ok(m.clone());
        }
        set_builtin_threads();
        if let Some(m) = preload::encoder().filter(|m| m.path() == dir && m.spec() == spec) {
            *slot.borrow_mut() = Some(m.clone());
            return Ok(m);
        }
        let m = Arc::new(with_signals_blocked(|| Encoder::load(&dir, spec))?);
        *slot.borrow_mut() = Some(m.clone());
        Ok(m)
    })
}

/// Tells the models' forward pass how many threads to use (`memory_ext.builtin_threads`), once
/// per backend, before the model's first use.
///
/// # Why an environment variable
/// The forward pass (crates/memory_providers/src/bert.rs) runs its matrix products and attention
/// on rayon's global pool, which reads `RAYON_NUM_THREADS` when it starts and otherwise takes
/// every CPU it sees, whatever share of them the server should use. Set before any such thread
/// exists: the backend is single-threaded here.
pub(crate) fn set_builtin_threads() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RAYON_NUM_THREADS").is_none() {
            std::env::set_var("RAYON_NUM_THREADS", gucs::builtin_threads().to_string());
        }
    });
}

/// Runs `f` with every signal blocked in this (the backend's) thread, restoring the mask after,
/// also on unwind.
///
/// # Why
/// rayon (the models' forward pass) and tokenizers start worker threads on first use. A new thread inherits its
/// creator's signal mask; Postgres delivers SIGINT, SIGTERM, SIGUSR1 ... to the process, and the
/// kernel may hand them to any thread that does not block them, where the backend's handlers
/// would run on a thread Postgres knows nothing about. Creating those threads with everything
/// blocked keeps every signal on the backend's own thread. Signals arriving meanwhile stay
/// pending and are handled when the mask is restored, a few milliseconds later.
pub fn with_signals_blocked<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(libc::sigset_t);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: restores the mask saved below, on the same thread; pthread_sigmask with
            // a valid set pointer cannot fail.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
        }
    }
    // SAFETY: sigfillset initialises `all`; pthread_sigmask reads `all` and writes the previous
    // mask into `old`, both valid stack values of the right type.
    let _restore = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        Restore(old)
    };
    f()
}

/// A vector in pgvector's text form, `[0.1,0.2,...]`, for `$n::vector` parameters.
pub fn vector_text(v: &[f32]) -> String {
    let mut s = String::with_capacity(v.len() * 12 + 2);
    s.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&x.to_string());
    }
    s.push(']');
    s
}
