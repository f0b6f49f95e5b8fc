//! Embeddings at the SQL boundary (docs/api.md "Embeddings and LLM"): `memory_embed`, the write-path
//! helper that never loses a write, and `memory_reembed`, the backfill that drains rows without
//! a vector or with an old model's vector.

use crate::embed::{self, vector_text, ActiveModel};
use crate::error::{OrRaise, SpiOk};
use crate::gucs;
use crate::pg::spi;
use memory_core::validate;
use memory_providers::embed::EmbedError;
use pgrx::prelude::*;

/// The active provider's vector for `input`, as real[] (memory_embed casts it to vector).
#[pg_extern(volatile, parallel_restricted, schema = "memory")]
fn embed_array(input: Option<&str>) -> Vec<f32> {
    let input = crate::pg::limits::text("input", input);
    let (_, mut vectors) = embed::embed(&[input]).or_raise();
    vectors.pop().unwrap_or_default()
}

/// Vectors for many inputs in one provider call (batches of 32 for the built-in model, 64 per
/// HTTP request), in input order.
#[pg_extern(volatile, parallel_restricted, schema = "memory")]
fn embed_batch_arrays(
    inputs: Option<Vec<Option<String>>>,
) -> TableIterator<'static, (name!(ord, i32), name!(embedding, Vec<f32>))> {
    let inputs = validate::required("inputs", inputs.as_ref()).or_raise();
    crate::pg::limits::batch("inputs", inputs.len());
    let texts: Vec<&str> = inputs
        .iter()
        .map(|t| crate::pg::limits::text("inputs element", t.as_deref()))
        .collect();
    let (_, vectors) = embed::embed(&texts).or_raise();
    TableIterator::new(
        vectors
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as i32 + 1, v)),
    )
}

extension_sql!(
    r#"
-- memory_embed(input) -> vector: the configured provider, for callers and tests.
-- memory_embed_batch(inputs) -> (ord, embedding): one provider call for many inputs.
-- SQL wrappers, so that the result is pgvector's own type (real[] -> vector is pgvector's cast);
-- created with pgvector's schema written into their bodies, which are resolved at call time
-- under the caller's search_path.
DO $do$
DECLARE
    vs text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                WHERE e.extname = 'vector');
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION memory_embed(input text) RETURNS %1$s.vector
        LANGUAGE sql VOLATILE PARALLEL RESTRICTED
        AS 'SELECT memory.embed_array(input)::%1$s.vector'
    $f$, vs);
    EXECUTE format($f$
        CREATE FUNCTION memory_embed_batch(inputs text[]) RETURNS TABLE (ord integer, embedding %1$s.vector)
        LANGUAGE sql VOLATILE PARALLEL RESTRICTED
        AS 'SELECT b.ord, b.embedding::%1$s.vector FROM memory.embed_batch_arrays(inputs) b'
    $f$, vs);
END
$do$;
"#,
    name = "memory_embed",
    requires = [embed_array, embed_batch_arrays]
);

/// Makes sure the model's registry row and HNSW indexes exist before a vector of it is stored
/// (as the extension owner: the registry is not the tenants', see src/pg/owner.rs). `Err` when
/// the registry is full: the caller stores the row without a vector and records why, so a
/// full registry never loses a write.
pub fn ensure_model(model: &ActiveModel, dims: usize) -> Result<(), String> {
    let registered = crate::pg::owner::as_owner(|| {
        spi::one_kept::<bool>(
            "SELECT memory._ensure_embedding_model($1, $2)",
            &[model.id.as_str().into(), (dims as i32).into()],
            "registering an embedding model",
        )
    });
    if registered == Some(false) {
        return Err(format!(
            "too many embedding models: \"{}\" is not registered (delete unused rows from memory.embedding_models)",
            model.id
        ));
    }
    Ok(())
}

/// What a write stores: a vector of the active model, or nothing and the reason.
pub enum WriteEmbedding {
    Vector {
        model: String,
        text: String,
    },
    /// `memory_ext.embed_on_write` is off: the backfill will embed the row.
    Deferred,
    Failed {
        model: String,
        error: String,
    },
}

impl WriteEmbedding {
    /// The `(embedding, embedding_model)` column values to store: the vector's text form and
    /// its model, or both NULL.
    pub fn columns(&self) -> (Option<&str>, Option<&str>) {
        match self {
            WriteEmbedding::Vector { model, text } => (Some(text.as_str()), Some(model.as_str())),
            _ => (None, None),
        }
    }
}

/// Embeds `text` for a write. Never raises: a provider that is down, slow or answers garbage
/// must not lose the write, so a failure is returned for the caller to store the row without
/// a vector and record it (see [`record_failure`]).
pub fn for_write(text: &str) -> WriteEmbedding {
    if !gucs::embed_on_write() {
        return WriteEmbedding::Deferred;
    }
    let model_id = embed::active_model()
        .map(|m| m.id)
        .unwrap_or_else(|_| "unconfigured".into());
    match embed::embed(&[text]) {
        Ok((model, mut vs)) => match vs.pop() {
            Some(v) => match ensure_model(&model, v.len()) {
                Ok(()) => WriteEmbedding::Vector {
                    model: model.id,
                    text: vector_text(&v),
                },
                Err(error) => WriteEmbedding::Failed {
                    model: model.id,
                    error,
                },
            },
            None => WriteEmbedding::Failed {
                model: model_id,
                error: "provider returned no vector".into(),
            },
        },
        Err(e) => WriteEmbedding::Failed {
            model: model_id,
            error: e.to_string(),
        },
    }
}

/// Base delay before the backfill retries a failed row, doubled per attempt, capped at 1 h:
/// 60 s, 2, 4, 8 min ... so a provider outage of a quarter of an hour costs 5 attempts.
const RETRY_BASE_SECONDS: i32 = 60;

/// Records (or counts another) failed embedding of a row; the row gives up after
/// `memory_ext.embedding_max_attempts`.
pub fn record_failure(user: &str, target: &str, row_id: &str, model: &str, error: &str) {
    Spi::run_with_args(
        include_str!("../../sql/queries/record_embedding_failure.sql"),
        &[
            user.into(),
            target.into(),
            row_id.into(),
            model.into(),
            error.into(),
            RETRY_BASE_SECONDS.into(),
            gucs::embedding_max_attempts().into(),
        ],
    )
    .spi("recording an embedding failure");
}

/// One row the backfill claimed.
struct Claimed {
    target: &'static str,
    user: String,
    id: String,
    body: String,
}

fn claim(target: &'static str, query: &str, stale: &[String], limit: i32) -> Vec<Claimed> {
    Spi::connect_mut(|c| {
        let rows = c.update(query, None, &[limit.into(), stale.to_vec().into()])?;
        let mut out = Vec::new();
        for r in rows {
            out.push(Claimed {
                target,
                user: r.get::<String>(1)?.unwrap_or_default(),
                id: r.get::<String>(2)?.unwrap_or_default(),
                body: r.get::<String>(3)?.unwrap_or_default(),
            });
        }
        Ok::<_, pgrx::spi::Error>(out)
    })
    .spi("claiming rows to embed")
}

/// Stores the vectors of `rows`; with the registry full, records the failure of each row
/// instead (retried with backoff like an outage). Returns how many rows got a vector.
fn store(rows: &[&Claimed], vectors: &[Vec<f32>], model: &ActiveModel) -> usize {
    if let Some(first) = vectors.first() {
        if let Err(e) = ensure_model(model, first.len()) {
            for r in rows {
                record_failure(&r.user, r.target, &r.id, &model.id, &e);
            }
            return 0;
        }
    }
    for target in ["item", "message", "file"] {
        let (users, ids, vecs): (Vec<String>, Vec<String>, Vec<String>) = rows
            .iter()
            .zip(vectors)
            .filter(|(r, _)| r.target == target)
            .map(|(r, v)| (r.user.clone(), r.id.clone(), vector_text(v)))
            .fold((vec![], vec![], vec![]), |mut acc, (u, i, v)| {
                acc.0.push(u);
                acc.1.push(i);
                acc.2.push(v);
                acc
            });
        if ids.is_empty() {
            continue;
        }
        let table = match target {
            "item" => "items",
            "message" => "messages",
            _ => "files",
        };
        Spi::run_with_args(
            &format!(
                "UPDATE memory.{table} t SET embedding = v.e::{vector}, embedding_model = $4
                 FROM unnest($1::text[], $2::uuid[], $3::text[]) AS v(u, id, e)
                 WHERE t.user_id = v.u AND t.id = v.id",
                vector = crate::pg::vector::unsized_ty()
            ),
            &[
                users.clone().into(),
                ids.clone().into(),
                vecs.into(),
                model.id.as_str().into(),
            ],
        )
        .spi("storing embeddings");
        Spi::run_with_args(
            "DELETE FROM memory.embedding_failures f USING unnest($1::text[], $2::uuid[]) AS v(u, id)
             WHERE f.user_id = v.u AND f.target = $3 AND f.row_id = v.id",
            &[users.into(), ids.into(), target.into()],
        )
        .spi("clearing embedding failures");
    }
    rows.len()
}

/// Re-embeds up to `batch` rows (memories first, then messages, then memory files) that have no vector, or one of a
/// model other than the active one; rows are claimed with `FOR UPDATE SKIP LOCKED`, so several
/// backfills can run at once. Returns how many rows got a vector. Rows whose embedding fails are
/// recorded in memory.embedding_failures and retried with backoff, up to
/// `memory_ext.embedding_max_attempts`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_reembed(batch: default!(Option<i32>, 100)) -> i64 {
    let batch = *validate::required("batch", batch.as_ref()).or_raise();
    let batch = validate::range("batch", batch as i64, 1, 10_000).or_raise() as i32;
    reembed(batch)
}

/// One backfill batch of up to `batch` rows (memory_reembed; the worker calls it directly).
pub fn reembed(batch: i32) -> i64 {
    let model = embed::active_model().or_raise();
    let stale: Vec<String> = spi::one_opt::<Vec<String>>(
        "SELECT coalesce(array_agg(model_id), '{}') FROM memory.embedding_models WHERE model_id <> $1",
        &[model.id.as_str().into()],
        "listing old embedding models",
    )
    .unwrap_or_default();
    // Memories first, then messages, then files, while the batch has room.
    let mut rows = vec![];
    for (target, sql) in [
        ("item", include_str!("../../sql/queries/reembed_items.sql")),
        (
            "message",
            include_str!("../../sql/queries/reembed_messages.sql"),
        ),
        ("file", include_str!("../../sql/queries/reembed_files.sql")),
    ] {
        let left = batch - rows.len() as i32;
        if left <= 0 {
            break;
        }
        rows.extend(claim(target, sql, &stale, left));
    }
    if rows.is_empty() {
        return 0;
    }
    let bodies: Vec<&str> = rows.iter().map(|r| r.body.as_str()).collect();
    match embed::embed(&bodies) {
        Ok((m, vectors)) => {
            let refs: Vec<&Claimed> = rows.iter().collect();
            store(&refs, &vectors, &m) as i64
        }
        Err(batch_error) if provider_down(&batch_error) => {
            // Trying each row alone would only repeat the outage once per row (up to one
            // timeout each, with the rows locked): every row waits for its retry instead.
            let e = batch_error.to_string();
            for r in &rows {
                record_failure(&r.user, r.target, &r.id, &model.id, &e);
            }
            0
        }
        Err(batch_error) => {
            // One bad input must not hold back the rest: try each row alone.
            let mut done = 0;
            for r in &rows {
                // A cancel or a worker shutdown stops here rather than after the last row.
                pgrx::check_for_interrupts!();
                match embed::embed(&[r.body.as_str()]) {
                    Ok((m, vectors)) => done += store(&[r], &vectors, &m),
                    Err(e) => {
                        let e = if rows.len() == 1 { &batch_error } else { &e };
                        record_failure(&r.user, r.target, &r.id, &model.id, &e.to_string())
                    }
                }
            }
            done as i64
        }
    }
}

/// Errors of the provider as a whole (down, unreachable, misconfigured), as opposed to one
/// input it could not embed.
fn provider_down(e: &EmbedError) -> bool {
    matches!(
        e,
        EmbedError::Unreachable { .. }
            | EmbedError::Timeout { .. }
            | EmbedError::Config(_)
            | EmbedError::ModelMissing { .. }
            | EmbedError::ModelLoad { .. }
    )
}
