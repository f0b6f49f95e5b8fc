//! pgvector's type and cosine operator, schema-qualified, for queries we build.
//!
//! # Why qualified
//! Our SPI queries run with the caller's search_path. pgvector may live in a schema that path
//! does not include, and an unqualified `vector` or `<=>` would then fail to resolve (or resolve
//! to something else). The schema is looked up once per backend.

use crate::pg::spi;
use crate::pg::statement::Memo;
use memory_core::cosine::Scale;
use std::cell::RefCell;

thread_local! {
    static SCHEMA: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether a model's indexes are half precision, read once per statement: the registry
    /// changes under a running backend when memory_embedding_reindex()'s statements switch it.
    static HALF: Memo<String, bool> = const { Memo::new() };
}

fn schema() -> String {
    SCHEMA.with(|s| {
        if let Some(v) = s.borrow().as_ref() {
            return v.clone();
        }
        let v = spi::one_opt::<String>(
            "SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'",
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
fn ty(dims: usize) -> String {
    format!("{}.vector({dims})", schema())
}

/// The sized type a model's vectors are searched as: `"public".vector(384)`, or
/// `"public".halfvec(384)` when the registry records half-precision indexes for the model
/// (sql/embed.sql, memory_ext.embedding_precision), so that the planner matches its HNSW index.
/// The stored vectors are full precision either way; the cast is what the index holds.
pub fn ty_of(model_id: &str, dims: usize) -> String {
    let half = HALF.with(|h| {
        h.with(
            model_id.to_string(),
            |m| {
                spi::one_opt::<String>(
                    "SELECT index_type FROM memory.embedding_models WHERE model_id = $1",
                    &[m.as_str().into()],
                    "reading a model's index type",
                )
                .is_some_and(|t| t == "halfvec")
            },
            |half| *half,
        )
    });
    if half {
        format!("{}.halfvec({dims})", schema())
    } else {
        ty(dims)
    }
}

/// `"public".vector_dims`, a vector's size.
pub fn dims_fn() -> String {
    format!("{}.vector_dims", schema())
}

/// `OPERATOR("public".<=>)`, cosine distance.
pub fn cosine_op() -> String {
    format!("OPERATOR({}.<=>)", schema())
}

/// What a cosine search over one model's vectors writes into its SQL: the model id as a literal
/// (for the model's partial HNSW index), the sized vector type, the operator, and the model's
/// scale for a query's cosines (similarities are reported on the reference scale,
/// memory_core::cosine).
pub struct Cosine {
    pub model: String,
    pub ty: String,
    pub op: String,
    pub scale: Scale,
}

impl Cosine {
    pub fn of(model_id: &str, dims: usize) -> Self {
        Cosine {
            model: literal(model_id),
            ty: ty_of(model_id, dims),
            op: cosine_op(),
            scale: crate::embed::query_scale_of(model_id),
        }
    }
}

/// A SQL string literal (model ids go into query text so that the planner can match the
/// partial HNSW index of their model; values are never interpolated otherwise).
pub fn literal(s: &str) -> String {
    pgrx::spi::quote_literal(s)
}

/// Runs `f` with the planner settings our retrieval statements are written for; the caller's
/// values come back afterwards (the caller's transaction goes on):
///
/// * `hnsw.iterative_scan = relaxed_order` (pgvector >= 0.8): a tenant filter on an HNSW scan
///   must not starve the scan of results.
/// * `enable_seqscan = off`: these statements are designed around their indexes (the model's
///   HNSW index, the GIN full-text index with the tenant lexeme, primary keys). When one tenant
///   holds most of a table, the planner's estimate makes a sequential scan of every memory look
///   cheaper than a GIN bitmap over the matching tenth, although the per-row BM25 work makes it
///   far dearer (measured in tests/client/tests/memories.rs at 20k memories). Off still allows a
///   sequential scan when no index applies; it only stops the planner from preferring one.
/// * `plan_cache_mode = force_custom_plan`: statements kept prepared (`spi::with_prepared`) are
///   still planned for each call's values (why: see there).
/// * `constraint_exclusion = off`: a custom plan of a statement on memory.items proved, for the
///   tenant's partition, that its CHECK constraints do not exclude it, parsing each of them
///   from its stored text at every plan (1.5% of a memory_query's time in `perf` at 100k
///   memories). Our statements never rely on CHECK constraints to skip a table; the partition
///   is chosen by partition pruning, which this setting does not touch.
///
/// Set through Postgres' GUC stack (`spi::with_settings`), not by `set_config()` statements.
pub fn with_iterative_scan<R>(f: impl FnOnce() -> R) -> R {
    spi::with_settings(
        &[
            (c"hnsw.iterative_scan", c"relaxed_order"),
            (c"enable_seqscan", c"off"),
            (c"plan_cache_mode", c"force_custom_plan"),
            (c"constraint_exclusion", c"off"),
        ],
        f,
    )
}
