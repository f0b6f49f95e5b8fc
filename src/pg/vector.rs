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

/// Runs `f` with pgvector's iterative index scans on (pgvector >= 0.8), restoring the caller's
/// setting afterwards: a tenant filter on an HNSW scan must not starve the scan of results.
pub fn with_iterative_scan<R>(f: impl FnOnce() -> R) -> R {
    let old = spi::one_opt::<String>(
        "SELECT current_setting('hnsw.iterative_scan', true)",
        &[],
        "reading hnsw.iterative_scan",
    );
    let set = |v: &str| {
        Spi::run_with_args(
            "SELECT set_config('hnsw.iterative_scan', $1, true)",
            &[v.into()],
        )
        .spi("setting hnsw.iterative_scan")
    };
    set("relaxed_order");
    let r = f();
    set(old.as_deref().filter(|v| !v.is_empty()).unwrap_or("off"));
    r
}
