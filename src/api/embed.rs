//! Embeddings at the SQL boundary (docs/api.md "Embeddings and LLM"): the provider's vectors
//! (`memory_embed` and `memory_embed_batch` wrap these two in sql/embed.sql) and
//! `memory_reembed`, the backfill (src/embed/reembed.rs).

use crate::embed;
use crate::error::OrRaise;
use memory_core::validate;
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

/// Re-embeds up to `batch` rows (memories first, then messages, then memory files) that have no
/// vector, or one of a model other than the active one; returns how many rows got a vector.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_reembed(batch: default!(Option<i32>, 100)) -> i64 {
    let batch = *validate::required("batch", batch.as_ref()).or_raise();
    let batch = validate::range("batch", batch as i64, 1, 10_000).or_raise() as i32;
    embed::reembed::reembed(batch)
}
