//! Consent (docs/api.md "Consent"): inferred changes to sensitive fields wait for the user.
//! Consent decides and the write path applies: src/ops/write.rs asks [`gate`] before writing
//! and, for memory_approve, takes the proposal's request from [`take`] and reports the write
//! back with [`decided`]; this module never writes a memory itself. Which writes fall under
//! which policy is memory_core::consent.
//!
//! Proposals are written and decided as the extension's owner (a tenant reads its own, and
//! must not be able to approve by rewriting the row), after the caller's own row security has
//! shown the proposal is theirs.

use crate::error::{raise, OrRaise};
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::owner::as_owner;
use crate::pg::{spi, tenant};
use memory_core::consent::{self, Policy};
use memory_core::request::{self, WriteRequest};
use memory_core::SqlState;
use serde_json::{json, Value};

/// What the write path does with a request.
pub enum Gate {
    /// Write it as usual.
    Write,
    /// Not written: a proposal waits; this is memory_write's answer.
    Proposed(Value),
    /// Write it: a pending proposal (this id) is corroborated and becomes 'applied'.
    Corroborated(String),
}

/// The category and state of each memory a request changes besides creating one: the memory
/// it updates (`id`) and the one it supersedes, as (id, category, state).
fn touched(user: &str, req: &WriteRequest) -> Vec<(String, Option<String>, String)> {
    let ids: Vec<String> = req.id.iter().chain(&req.supersedes).cloned().collect();
    if ids.is_empty() {
        return vec![];
    }
    spi::rows(
        "SELECT id::text, category, state FROM memory.items WHERE user_id = $1 AND id = ANY($2::uuid[])",
        &[user.into(), ids.into()],
        "reading the memories a write changes",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?,
                r.get::<String>(3)?.unwrap_or_default(),
            ))
        },
    )
}

/// A proposal must be one that can be applied: the memories it updates or supersedes exist for
/// this tenant (P0002; another tenant's are not seen) and a superseded one is active (22023).
/// Checked when it is proposed, not found out at approval.
fn check_targets(req: &WriteRequest, found: &[(String, Option<String>, String)]) {
    for (field, id) in [("id", &req.id), ("supersedes", &req.supersedes)] {
        let Some(id) = id else { continue };
        match found.iter().find(|t| &t.0 == id) {
            None => raise(
                SqlState::NoDataFound,
                format!("memory {id} not found ({field})"),
                None,
            ),
            Some((_, _, state)) if field == "supersedes" && state != "active" => raise(
                SqlState::InvalidParameterValue,
                format!("memory {id} is {state}: only an active memory can be superseded"),
                None,
            ),
            _ => {}
        }
    }
}

/// The policy for a checked request of `user` whose normalised text is `text`: judged by the
/// request's category and those of the memories it updates or supersedes
/// (memory_core::consent::policy). A category drawn like a protected one is refused (22023)
/// whatever the source.
pub fn gate(user: &str, req: &WriteRequest, text: &str) -> Gate {
    let (consent_cats, corroborate_cats) =
        (gucs::consent_categories(), gucs::corroborate_categories());
    if let Some(c) = &req.category {
        consent::check_lookalike(c, &consent_cats, &corroborate_cats).or_raise();
    }
    if req.source.as_deref() != Some("inferred") {
        return Gate::Write;
    }
    let found = touched(user, req);
    let mut categories: Vec<&str> = req.category.as_deref().into_iter().collect();
    categories.extend(found.iter().filter_map(|t| t.1.as_deref()));
    let Some((policy, category)) = consent::policy(
        req.source.as_deref(),
        &categories,
        &consent_cats,
        &corroborate_cats,
    ) else {
        return Gate::Write;
    };
    check_targets(req, &found);
    let category = category.to_string();
    if policy == Policy::Corroborate {
        // A signal whose source is sure (an inference with high confidence): it needs no second
        // signal.
        if req
            .confidence
            .is_some_and(|c| c >= gucs::corroborate_confidence())
        {
            return Gate::Write;
        }
        let signal = |sql: &str, args: Vec<pgrx::datum::DatumWithOid<'static>>| {
            as_owner(|| {
                spi::row(sql, &args, "corroborating a proposal", |r| {
                    Ok((
                        r.get::<String>(1)?.unwrap_or_default(),
                        r.get::<i32>(2)?.unwrap_or(1),
                    ))
                })
            })
        };
        // The same words, else the same meaning in other words.
        let found = signal(
            include_str!("../../sql/queries/consent_corroborate.sql"),
            vec![
                user.to_string().into(),
                category.clone().into(),
                text.to_string().into(),
            ],
        )
        .or_else(|| {
            let id = same_meaning(user, &category, text)?;
            signal(
                include_str!("../../sql/queries/consent_corroborate_id.sql"),
                vec![user.to_string().into(), id.into()],
            )
        });
        if let Some((id, signals)) = found {
            if signals >= consent::CORROBORATING_SIGNALS {
                return Gate::Corroborated(id);
            }
        }
    }
    Gate::Proposed(propose(user, req, text, &category, policy.name(), None))
}

/// The oldest pending corroborate proposal of `category` that `text` says again in other words
/// (memory_core::consent::corroborates at `memory_ext.corroborate_threshold`). Proposals keep
/// no vector, so the few pending ones are embedded with the signal here; without an embedding
/// model nothing corroborates by meaning (the same words still do).
fn same_meaning(user: &str, category: &str, text: &str) -> Option<String> {
    let pending: Vec<(String, String)> = as_owner(|| {
        spi::rows(
            include_str!("../../sql/queries/consent_pending_texts.sql"),
            &[user.into(), category.into()],
            "reading pending proposals",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?.unwrap_or_default(),
                ))
            },
        )
    });
    if pending.is_empty() {
        return None;
    }
    let texts: Vec<&str> = std::iter::once(text)
        .chain(pending.iter().map(|(_, t)| t.as_str()))
        .collect();
    let (model, vectors) = crate::embed::embed(&texts).ok()?;
    let (first, rest) = vectors.split_first()?;
    // The threshold is on the reference scale (memory_core::cosine).
    let scale = crate::embed::scale_of(&model.id);
    let threshold = gucs::corroborate_threshold();
    pending
        .iter()
        .zip(rest)
        .find(|((_, t), v)| {
            consent::corroborates(text, t, scale.to_reference(cosine(first, v)), threshold)
        })
        .map(|((id, _), _)| id.clone())
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// What screening flagged in a memory (src/ops/screen.rs) waits for memory_approve as a
/// proposal of policy `flag`, out of recall and of the delta header, and is not embedded until
/// approved. Its request keeps the detectors' names (`screen_flagged`), never the values.
pub fn hold(user: &str, req: &WriteRequest, text: &str, flagged: &[&str]) -> Value {
    let category = req.category.clone().unwrap_or_default();
    let mut out = propose(user, req, text, &category, "flag", Some(flagged));
    out["flagged"] = json!(flagged);
    out
}

fn propose(
    user: &str,
    req: &WriteRequest,
    text: &str,
    category: &str,
    policy: &str,
    flagged: Option<&[&str]>,
) -> Value {
    let mut stored = req.to_json();
    stored["user_id"] = json!(user);
    stored["text"] = json!(text);
    if let Some(f) = flagged {
        stored[FLAGGED] = json!(f);
    }
    let (id, expires) = as_owner(|| {
        let row = spi::row(
            include_str!("../../sql/queries/consent_propose.sql"),
            &[
                user.into(),
                category.into(),
                text.into(),
                pgrx::JsonB(stored).into(),
                policy.into(),
                req.thread_id.clone().into(),
                consent::PROPOSAL_DAYS.into(),
            ],
            "recording a proposal",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?.unwrap_or_default(),
                ))
            },
        );
        // Its event as the owner too: Citus refuses a transaction in which two users write to
        // one tenant's shards (docs/citus.md).
        events::record(Event {
            thread: req.thread_id.as_deref(),
            category: Some(category),
            status: "skipped",
            ..Event::new(user, Node::Hotpath, "propose")
        });
        row
    })
    .unwrap_or_default();
    json!({
        "id": null, "event": "proposed", "proposal_id": id, "policy": policy,
        "category": category, "expires_at": expires, "related": [],
    })
}

/// The key of a flagged proposal's request that names the detectors (not a memory_write field:
/// taken out before the request is applied).
const FLAGGED: &str = "screen_flagged";

/// A corroborated proposal was written as `memory_id`.
pub fn applied(user: &str, proposal: &str, memory_id: &str) {
    as_owner(|| {
        spi::run(
            include_str!("../../sql/queries/consent_decide.sql"),
            &[
                user.into(),
                proposal.into(),
                "applied".into(),
                memory_id.into(),
                "corroborated".into(),
            ],
            "applying a proposal",
        )
    });
}

/// The caller's proposal `id`: (user, status, expired, request, expires_at). P0002 when the
/// caller sees none.
fn find(id: &str) -> (String, String, bool, Value, String) {
    let rows = spi::rows(
        include_str!("../../sql/queries/consent_find.sql"),
        &[id.into(), tenant::acting().into()],
        "reading a proposal",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<bool>(3)?.unwrap_or(false),
                r.get::<pgrx::JsonB>(4)?.map(|j| j.0).unwrap_or_default(),
                r.get::<String>(5)?.unwrap_or_default(),
            ))
        },
    );
    match rows.len() {
        1 => rows.into_iter().next().unwrap_or_default(),
        0 => raise(
            SqlState::NoDataFound,
            format!("proposal {id} not found"),
            None,
        ),
        _ => raise(
            SqlState::InvalidParameterValue,
            format!("proposal {id} exists for several tenants"),
            Some("SET memory_ext.user_id to the tenant you mean".into()),
        ),
    }
}

fn pending_or_raise(id: &str, status: &str, expired: bool, expires: &str) {
    if status != "pending" {
        raise(
            SqlState::InvalidParameterValue,
            format!("proposal {id} is {status}: only a pending proposal can be decided"),
            None,
        );
    }
    if expired {
        raise(
            SqlState::InvalidParameterValue,
            format!("proposal {id} expired at {expires}"),
            Some("an expired proposal is not applied; the change can be proposed again".into()),
        );
    }
}

fn decide(user: &str, id: &str, status: &str, memory_id: Option<&str>, by: &str) {
    let done = as_owner(|| {
        spi::one_opt::<String>(
            include_str!("../../sql/queries/consent_decide.sql"),
            &[
                user.into(),
                id.into(),
                status.into(),
                memory_id.into(),
                by.into(),
            ],
            "deciding a proposal",
        )
    });
    if done.is_none() {
        raise(
            SqlState::InvalidParameterValue,
            format!("proposal {id} was decided meanwhile"),
            None,
        );
    }
}

/// Who decided: the role, and whom it acts for (sql/triggers.sql `memory._actor`).
fn who() -> String {
    spi::one_opt::<String>("SELECT memory._actor()", &[], "reading the role").unwrap_or_default()
}

/// A proposal memory_approve is applying.
pub struct Taken {
    pub user: String,
    /// The request to write, its `source` cleared: approved, it is the user's.
    pub req: WriteRequest,
    /// The role deciding (read as the caller, before the write runs as the owner).
    pub by: String,
}

/// memory_approve's first half: the caller's pending proposal `id`, checked. A memory it was to
/// supersede that is no longer active (forgotten, superseded meanwhile) is left alone: the
/// approved fact is still written. The write path (src/ops/write.rs `approve`) writes it and
/// reports back with [`decided`].
pub fn take(id: &str, by: Option<String>) -> Taken {
    let (user, status, expired, mut request, expires) = find(id);
    pending_or_raise(id, &status, expired, &expires);
    if let Some(o) = request.as_object_mut() {
        o.remove(FLAGGED);
    }
    let mut req = request::parse_write(&request).unwrap_or_else(|e| {
        raise(
            SqlState::SystemError,
            format!("proposal {id} holds a request that no longer parses: {e}"),
            None,
        )
    });
    if let Some(old) = &req.supersedes {
        let active = spi::one_opt::<bool>(
            "SELECT state = 'active' FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.as_str().into(), old.as_str().into()],
            "reading a memory's state",
        );
        if active != Some(true) {
            req.supersedes = None;
        }
    }
    req.source = None;
    Taken {
        user,
        req,
        by: by.unwrap_or_else(who),
    }
}

/// memory_approve's second half: the proposal is approved as `memory_id`, with its event. Runs
/// as the owner inside the write's owner section (src/ops/write.rs `approve`).
pub fn decided(taken: &Taken, id: &str, memory_id: Option<&str>) {
    let user = taken.user.as_str();
    decide(user, id, "approved", memory_id, &taken.by);
    events::record(Event {
        memory_id,
        ..Event::new(user, Node::Hotpath, "approve")
    });
}

/// memory_reject: records the decision; nothing is written. `{proposal_id, status}`. `by`
/// says who decided when it is not the role (the user in a chat, src/ops/tools/consent.rs).
pub fn reject(id: &str, by: Option<String>) -> Value {
    let (user, status, expired, _, expires) = find(id);
    pending_or_raise(id, &status, expired, &expires);
    let by = by.unwrap_or_else(who);
    as_owner(|| {
        decide(&user, id, "rejected", None, &by);
        events::record(Event::new(&user, Node::Hotpath, "reject"));
    });
    json!({ "proposal_id": id, "status": "rejected" })
}

/// The delta header's line about pending proposals, if the tenant has any:
/// `- ?proposed: [city] Sam moved to Denver. (awaiting consent; 2 pending)`.
pub fn header_line(user: &str) -> Option<String> {
    spi::row(
        include_str!("../../sql/queries/consent_pending.sql"),
        &[user.into()],
        "reading pending proposals",
        |r| {
            Ok((
                r.get::<i64>(1)?.unwrap_or(0),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
            ))
        },
    )
    .map(|(n, category, text)| memory_core::delta::proposal_line(n, &category, &text))
}
