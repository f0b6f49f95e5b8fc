//! Idempotency keys (docs/api.md "Idempotency", sql/idempotency.sql): a write that carries a
//! key claims it in the write's own transaction before it writes anything, and records its
//! answer after. The claim is what makes two concurrent repeats write once: the second waits on
//! the key's index entry until the first commits (a repeat) or rolls back (it writes). A call
//! that fails leaves no key, so retrying it is a first call again.
//!
//! Every write path that takes a key goes through [`once`]; what "the same body" means is
//! memory_core::idempotency's.

use crate::error::{raise, OrRaise};
use crate::gucs;
use crate::pg::spi;
use memory_core::request::Idempotency;
use memory_core::SqlState;
use pgrx::JsonB;
use serde_json::Value;

/// What a claim found.
pub enum Claim {
    /// The key is this call's: write, then [`answered`].
    Fresh,
    /// A call with the same key and body was made: its answer.
    Repeat(Value),
}

/// Claims `k` for tenant `user`'s call of `op`; 22023 when the key was used for another body.
pub fn claim(user: &str, op: &str, k: &Idempotency) -> Claim {
    spi::run(
        include_str!("../../sql/queries/idempotency_expire.sql"),
        &[
            user.into(),
            k.key.as_str().into(),
            gucs::idempotency_days().into(),
        ],
        "expiring an idempotency key",
    );
    let mine = spi::one_opt::<bool>(
        include_str!("../../sql/queries/idempotency_claim.sql"),
        &[
            user.into(),
            k.key.as_str().into(),
            op.into(),
            k.body.as_str().into(),
        ],
        "claiming an idempotency key",
    );
    if mine.is_some() {
        return Claim::Fresh;
    }
    let (same, first_op, answer) = spi::row(
        include_str!("../../sql/queries/idempotency_taken.sql"),
        &[user.into(), k.key.as_str().into(), k.body.as_str().into()],
        "reading an idempotency key",
        |r| {
            Ok((
                r.get::<bool>(1)?.unwrap_or(false),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<JsonB>(3)?.map(|j| j.0),
            ))
        },
    )
    .unwrap_or_else(|| {
        // Claimed a moment ago by a call that has since rolled back and been purged: cannot
        // happen inside one statement's snapshot of a committed row, but say so if it does.
        raise(
            SqlState::InvalidParameterValue,
            format!("idempotency key \"{}\" could not be claimed; retry", k.key),
            None,
        )
    });
    if !same {
        raise(
            SqlState::InvalidParameterValue,
            format!(
                "idempotency key \"{}\" was already used for a different request ({first_op})",
                k.key
            ),
            Some(
                "a retry must repeat the first request exactly; a new request needs a new key"
                    .into(),
            ),
        );
    }
    match answer {
        Some(a) => Claim::Repeat(a),
        None => raise(
            SqlState::InvalidParameterValue,
            format!(
                "idempotency key \"{}\" is taken by a call of this transaction that has not finished",
                k.key
            ),
            None,
        ),
    }
}

/// Records the answer of the call that claimed `k`, for its repeats.
pub fn answered(user: &str, k: &Idempotency, answer: &Value) {
    spi::run(
        "UPDATE memory.idempotency_keys SET answer = $3 WHERE user_id = $1 AND key = $2",
        &[
            user.into(),
            k.key.as_str().into(),
            JsonB(answer.clone()).into(),
        ],
        "recording an idempotency key's answer",
    );
}

/// Runs the write `f` once per key: without a key, just `f`; with one, the first call's answer
/// for a repeat, else `f` and its answer recorded.
pub fn once(user: &str, op: &str, k: Option<&Idempotency>, f: impl FnOnce() -> Value) -> Value {
    let Some(k) = k else { return f() };
    match claim(user, op, k) {
        Claim::Repeat(v) => v,
        Claim::Fresh => {
            let v = f();
            answered(user, k, &v);
            v
        }
    }
}

/// The key of a SQL function's call (`idempotency_key` argument) and the body its other
/// arguments make.
/// `args` is called only when there is a key: a call without one copies nothing.
pub fn of_call(
    op: &str,
    key: Option<&str>,
    args: impl FnOnce() -> Vec<(&'static str, Value)>,
) -> Option<Idempotency> {
    let key = memory_core::validate::optional_id("idempotency_key", key).or_raise()?;
    Some(Idempotency {
        key: key.to_string(),
        body: memory_core::idempotency::call_body(op, &args()),
    })
}
