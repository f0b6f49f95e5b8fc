//! Screening on the way in (docs/api.md "Screening"): every write path passes the text it is
//! about to store through [`text`] first, so that nothing of what the policy redacts or blocks
//! is stored, embedded or sent to a model. The detectors and the policy are
//! memory_core::screen's; this applies `memory_ext.screen` and records each decision.

use crate::error::raise;
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::tenant;
use memory_core::screen::{self, Policy};
use memory_core::SqlState;

/// The policy of `memory_ext.screen` (22023 when the setting does not parse).
fn policy() -> Policy {
    Policy::parse(gucs::screen().as_deref().unwrap_or("")).unwrap_or_else(|e| {
        raise(
            SqlState::InvalidParameterValue,
            format!("invalid memory_ext.screen: {e}"),
            Some(format!("the default is \"{}\"", screen::DEFAULT_POLICY)),
        )
    })
}

/// `s`, screened for a write of `what` (memory, message, block, file, detail): redacted where the
/// policy says so, or refused (22023, naming the detector, never the value) where it blocks.
/// Redactions are recorded as events of `user` (or the session's tenant): op `redact_<what>`,
/// the detector as category. A refusal is in the server log instead, since its transaction,
/// events included, rolls back.
pub fn text(what: &str, user: Option<&str>, s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    screened(&policy(), what, user, s)
}

/// `v` with every string in it screened as [`text`] screens one (tool calls' arguments, a
/// session item kept verbatim), under one reading of the policy.
pub fn json(what: &str, user: Option<&str>, v: &serde_json::Value) -> serde_json::Value {
    json_with(&policy(), what, user, v)
}

fn json_with(
    policy: &Policy,
    what: &str,
    user: Option<&str>,
    v: &serde_json::Value,
) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if !s.is_empty() => Value::String(screened(policy, what, user, s)),
        Value::Array(a) => {
            Value::Array(a.iter().map(|x| json_with(policy, what, user, x)).collect())
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), json_with(policy, what, user, x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn screened(policy: &Policy, what: &str, user: Option<&str>, s: &str) -> String {
    let o = screen::apply(policy, s);
    if let Some(detector) = o.blocked {
        pgrx::log!("memory_ext: screening refused a {what} write: it holds a {detector}");
        raise(
            SqlState::InvalidParameterValue,
            format!("this {what} contains a {detector}, which memory_ext.screen blocks"),
            Some("remove it and write again, or ask the operator about memory_ext.screen".into()),
        );
    }
    if o.redacted.is_empty() {
        return o.text;
    }
    if let Some(user) = user.map(str::to_string).or_else(tenant::current) {
        let op = format!("redact_{what}");
        for d in &o.redacted {
            events::record(Event {
                category: Some(d),
                ..Event::new(&user, Node::Hotpath, &op)
            });
        }
    }
    o.text
}
