//! pgvector's type and cosine operator, schema-qualified, for queries we build.
//!
//! # Why qualified
//! Our SPI queries run with the caller's search_path. pgvector may live in a schema that path
//! does not include, and an unqualified `vector` or `<=>` would then fail to resolve (or resolve
//! to something else). The schema is looked up once per backend.

use crate::error::SpiOk;
use crate::pg::spi;
use pgrx::prelude::*;
use std::cell::RefCell;

thread_local! {
    static SCHEMA: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn schema() -> String {
    SCHEMA.with(|s| {
        if let Some(v) = s.borrow().as_ref() {
            return v.clone();
        }
        let v = spi::one_opt::<String>(
            "SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
             WHERE e.extname = 'vector'",
            &[],
            "finding pgvector's schema",
        )
        .unwrap_or_else(|| "public".into());
        *s.borrow_mut() = Some(v.clone());
        v
    })
}

/// `"public".vector`, for `$n::<this>` casts of a vector's text form.
pub fn unsized_ty() -> String {
    format!("{}.vector", schema())
}

/// `"public".vector(384)`.
pub fn ty(dims: usize) -> String {
    format!("{}.vector({dims})", schema())
}

/// `OPERATOR("public".<=>)`, cosine distance.
pub fn cosine_op() -> String {
    format!("OPERATOR({}.<=>)", schema())
}

/// A SQL string literal (model ids go into query text so that the planner can match the
/// partial HNSW index of their model; values are never interpolated otherwise).
pub fn literal(s: &str) -> String {
    pgrx::spi::quote_literal(s)
}

/// Runs `f` with the planner settings our retrieval statements are written for, restoring the
/// caller's values afterwards (they are transaction-local, and the caller's transaction goes on):
///
/// * `hnsw.iterative_scan = relaxed_order` (pgvector >= 0.8): a tenant filter on an HNSW scan
///   must not starve the scan of results.
/// * `enable_seqscan = off`: these statements are designed around their indexes (the model's
///   HNSW index, the GIN full-text index with the tenant lexeme, primary keys). When one tenant
///   holds most of a table, the planner's estimate makes a sequential scan of every memory look
///   cheaper than a GIN bitmap over the matching tenth, although the per-row BM25 work makes it
///   far dearer (measured in tests/client/tests/memories.rs at 20k memories). Off still allows a
///   sequential scan when no index applies; it only stops the planner from preferring one.
pub fn with_iterative_scan<R>(f: impl FnOnce() -> R) -> R {
    const SETTINGS: [(&str, &str); 2] = [
        ("hnsw.iterative_scan", "relaxed_order"),
        ("enable_seqscan", "off"),
    ];
    let old: Vec<Option<String>> = SETTINGS
        .iter()
        .map(|(k, _)| {
            spi::one_opt::<String>(
                "SELECT current_setting($1, true)",
                &[(*k).into()],
                "reading a setting",
            )
        })
        .collect();
    let set = |k: &str, v: &str| {
        Spi::run_with_args("SELECT set_config($1, $2, true)", &[k.into(), v.into()])
            .spi("setting a planner option")
    };
    for (k, v) in SETTINGS {
        set(k, v);
    }
    let r = f();
    for ((k, _), v) in SETTINGS.iter().zip(old) {
        // An unset pgvector option reads as NULL: "off" is its default.
        set(k, v.as_deref().filter(|v| !v.is_empty()).unwrap_or("off"));
    }
    r
}
