//! memory_ext's providers, with no Postgres in them: the built-in embedding models and
//! the reranker (candle), the HTTP clients for OpenAI-compatible and Ollama endpoints, and the optional LLM
//! (OpenAI-compatible chat completions, `llm`). The pgrx crate
//! (`src/embed/`) reads the settings, caches one model per backend and maps errors to SQL.
//!
//! Tested by `cargo test -p memory_providers`: the model against an independent numpy
//! reference, the HTTP clients against a real server on 127.0.0.1.

mod bert;
pub mod embed;
pub mod llm;
pub mod post;
pub mod rerank;
