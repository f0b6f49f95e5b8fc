//! The backfill (`memory_reembed`, and the worker's embedding job): rows without a vector, or
//! with one of a model other than the active one, get the active model's. Rows are claimed with
//! `FOR UPDATE SKIP LOCKED`, so several backfills can run at once; a row whose embedding fails
//! is recorded in memory.embedding_failures and retried with backoff, up to
//! `memory_ext.embedding_max_attempts`.

use crate::embed::write::{ensure_model, record_failure};
use crate::embed::{self, vector_text, ActiveModel};
use crate::error::OrRaise;
use crate::pg::{spi, vector};
use memory_providers::embed::EmbedError;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Batches this process has run: turns the order in which tenants are served, batch after
/// batch.
static NEXT_TENANT: AtomicUsize = AtomicUsize::new(0);

/// One row the backfill claimed.
struct Claimed {
    target: &'static str,
    user: String,
    id: String,
    body: String,
}

/// What the backfill embeds, in order, with the statement that claims a tenant's rows of it.
const CLAIMS: [(&str, &str); 4] = [
    (
        "item",
        include_str!("../../sql/queries/embed_reembed_items.sql"),
    ),
    (
        "message",
        include_str!("../../sql/queries/embed_reembed_messages.sql"),
    ),
    (
        "file",
        include_str!("../../sql/queries/embed_reembed_files.sql"),
    ),
    (
        "store",
        include_str!("../../sql/queries/embed_reembed_store.sql"),
    ),
];

fn claim(
    target: &'static str,
    query: &str,
    stale: &[String],
    limit: i32,
    user: &str,
) -> Vec<Claimed> {
    spi::rows_mut(
        query,
        &[limit.into(), stale.to_vec().into(), user.into()],
        "claiming rows to embed",
        |r| {
            Ok(Claimed {
                target,
                user: r.get::<String>(1)?.unwrap_or_default(),
                id: r.get::<String>(2)?.unwrap_or_default(),
                body: r.get::<String>(3)?.unwrap_or_default(),
            })
        },
    )
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
    // One statement per table and tenant: on Citus each is routed to the tenant's shard. A
    // statement over several tenants is a multi-shard modification, which Citus serializes with
    // an exclusive lock on every shard; two backfills holding their claims' shard locks then
    // wait on each other (a distributed deadlock; tests/python/test_citus.py).
    let mut groups: Vec<(&str, &str, Vec<String>, Vec<String>)> = vec![];
    for (r, v) in rows.iter().zip(vectors) {
        match groups.iter_mut().find(|g| g.0 == r.target && g.1 == r.user) {
            Some(g) => {
                g.2.push(r.id.clone());
                g.3.push(vector_text(v));
            }
            None => groups.push((r.target, &r.user, vec![r.id.clone()], vec![vector_text(v)])),
        }
    }
    for (target, user, ids, vecs) in groups {
        let table = match target {
            "item" => "items",
            "message" => "messages",
            "file" => "files",
            _ => "store_vectors",
        };
        spi::run(
            &include_str!("../../sql/queries/embed_store.sql")
                .replace("{table}", table)
                .replace("{vector}", &vector::unsized_ty()),
            &[
                user.into(),
                ids.clone().into(),
                vecs.into(),
                model.id.as_str().into(),
            ],
            "storing embeddings",
        );
        spi::run(
            include_str!("../../sql/queries/embed_failure_clear.sql"),
            &[user.into(), ids.into(), target.into()],
            "clearing embedding failures",
        );
    }
    rows.len()
}

/// One backfill batch of up to `batch` rows: memories first, then messages, memory files and
/// store texts;
/// returns how many rows got a vector (memory_reembed, and the worker's embedding job).
pub fn reembed(batch: i32) -> i64 {
    let model = embed::active_model().or_raise();
    let stale = stale_models(&model);
    // Tenant by tenant (a claim locks one tenant's rows: docs/citus.md), and within a tenant
    // memories first, then messages, files and store texts, while the batch has room.
    let turn = NEXT_TENANT.fetch_add(1, Ordering::Relaxed);
    let tenants: Vec<String> = spi::rows(
        include_str!("../../sql/queries/embed_reembed_tenants.sql"),
        &[batch.into(), stale.clone().into(), (turn as i64).into()],
        "listing tenants with rows to embed",
        |r| Ok(r.get::<String>(1)?.unwrap_or_default()),
    );
    let mut rows: Vec<Claimed> = vec![];
    // Each tenant takes at most its share of the batch: one tenant's backlog of a million rows
    // fills one share per batch, not the whole batch, while the others wait. The list starts at
    // another tenant each batch, so no tenant is always last.
    let n = tenants.len().max(1);
    let share = (batch as usize).div_ceil(n) as i32;
    let start = turn % n;
    for user in tenants.iter().cycle().skip(start).take(tenants.len()) {
        let mine = rows.len();
        for (target, sql) in CLAIMS {
            let taken = (rows.len() - mine) as i32;
            let left = (batch - rows.len() as i32).min(share - taken);
            if left <= 0 {
                break;
            }
            rows.extend(claim(target, sql, &stale, left, user));
        }
    }
    embed_claimed(&rows, &model)
}

/// The stale models (every registered model but the active one): their vectors are redone.
fn stale_models(model: &ActiveModel) -> Vec<String> {
    spi::one_opt::<Vec<String>>(
        "SELECT coalesce(array_agg(model_id), '{}') FROM memory.embedding_models WHERE model_id <> $1",
        &[model.id.as_str().into()],
        "listing old embedding models",
    )
    .unwrap_or_default()
}

/// A backfill batch of up to `batch` rows of one tenant (memory_import embeds what it brought
/// this way, within its statement); how many rows got a vector.
pub fn reembed_tenant(user: &str, batch: i32) -> i64 {
    let model = embed::active_model().or_raise();
    let stale = stale_models(&model);
    let mut rows: Vec<Claimed> = vec![];
    for (target, sql) in CLAIMS {
        let left = batch - rows.len() as i32;
        if left <= 0 {
            break;
        }
        rows.extend(claim(target, sql, &stale, left, user));
    }
    embed_claimed(&rows, &model)
}

/// Embeds claimed rows and stores their vectors; a failure is recorded per row for its retry.
fn embed_claimed(rows: &[Claimed], model: &ActiveModel) -> i64 {
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
            for r in rows {
                record_failure(&r.user, r.target, &r.id, &model.id, &e);
            }
            0
        }
        Err(batch_error) => {
            // One bad input must not hold back the rest: try each row alone.
            let mut done = 0;
            for r in rows {
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
