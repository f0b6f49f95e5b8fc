//! Consent (docs/api.md "Consent"): inferred changes to sensitive fields wait for the user.
//! The write path asks [`gate`] before writing; memory_approve / memory_reject decide
//! (src/api/consent.rs). Which writes fall under which policy is memory_core::consent.
//!
//! Proposals are written and decided as the extension's owner (a tenant reads its own, and
//! must not be able to approve by rewriting the row), after the caller's own row security has
//! shown the proposal is theirs.

use crate::error::raise;
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

/// The policy for a checked request of `user` whose normalised text is `text`.
pub fn gate(user: &str, req: &WriteRequest, text: &str) -> Gate {
    let Some(policy) = consent::policy(
        req.source.as_deref(),
        req.category.as_deref(),
        &gucs::consent_categories(),
        &gucs::corroborate_categories(),
    ) else {
        return Gate::Write;
    };
    let category = req.category.clone().unwrap_or_default().to_lowercase();
    if policy == Policy::Corroborate {
        let found = as_owner(|| {
            spi::row(
                include_str!("../../sql/queries/consent_corroborate.sql"),
                &[user.into(), category.as_str().into(), text.into()],
                "corroborating a proposal",
                |r| {
                    Ok((
                        r.get::<String>(1)?.unwrap_or_default(),
                        r.get::<i32>(2)?.unwrap_or(1),
                    ))
                },
            )
        });
        if let Some((id, signals)) = found {
            if signals >= consent::CORROBORATING_SIGNALS {
                return Gate::Corroborated(id);
            }
        }
    }
    let mut stored = req.to_json();
    stored["user_id"] = json!(user);
    stored["text"] = json!(text);
    let (id, expires) = as_owner(|| {
        let row = spi::row(
            include_str!("../../sql/queries/consent_propose.sql"),
            &[
                user.into(),
                category.as_str().into(),
                text.into(),
                pgrx::JsonB(stored).into(),
                policy.name().into(),
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
            category: Some(&category),
            status: "skipped",
            ..Event::new(user, Node::Hotpath, "propose")
        });
        row
    })
    .unwrap_or_default();
    Gate::Proposed(json!({
        "id": null, "event": "proposed", "proposal_id": id, "policy": policy.name(),
        "expires_at": expires, "related": [],
    }))
}

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

fn who() -> String {
    spi::one_opt::<String>("SELECT current_user::text", &[], "reading the role").unwrap_or_default()
}

/// memory_approve: writes the proposal's memory (through the write path, as the owner: see
/// below) and records the decision. `{proposal_id, status, memory_id, event}`.
pub fn approve(id: &str) -> Value {
    let (user, status, expired, request, expires) = find(id);
    pending_or_raise(id, &status, expired, &expires);
    let mut req = request::parse_write(&request).unwrap_or_else(|e| {
        raise(
            SqlState::SystemError,
            format!("proposal {id} holds a request that no longer parses: {e}"),
            None,
        )
    });
    // A memory it was to supersede that is no longer active (forgotten, superseded meanwhile)
    // is left alone: the approved fact is still written.
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
    let by = who();
    // The write, the decision and the event as the owner, in that order: the decision is the
    // owner's to write, and Citus refuses a transaction in which two users write to one
    // tenant's shards (docs/citus.md). The proposal was found as the caller, so it is theirs.
    let (written, memory_id) = as_owner(|| {
        let written = crate::store::write::write(req);
        let memory_id = written["id"].as_str().map(str::to_string);
        decide(&user, id, "approved", memory_id.as_deref(), &by);
        events::record(Event {
            memory_id: memory_id.as_deref(),
            ..Event::new(&user, Node::Hotpath, "approve")
        });
        (written, memory_id)
    });
    json!({
        "proposal_id": id, "status": "approved", "memory_id": memory_id,
        "event": written["event"], "superseded": written.get("superseded"),
    })
}

/// memory_reject: records the decision; nothing is written. `{proposal_id, status}`.
pub fn reject(id: &str) -> Value {
    let (user, status, expired, _, expires) = find(id);
    pending_or_raise(id, &status, expired, &expires);
    let by = who();
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
