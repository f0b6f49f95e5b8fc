//! Screening on the way in (docs/api.md "Screening"): every write path passes the text it is
//! about to store through [`text`] first, so that nothing of what the policy redacts or blocks
//! is stored, embedded or sent to a model. The detectors and the policy are
//! memory_core::screen's; this applies `memory_ext.screen` (tightened by a memory's category,
//! or replaced by a superuser's per-call `"screen"`) and records each decision as an event.

use crate::error::raise;
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::{spi, tenant};
use memory_core::screen::{self, Policy};
use memory_core::SqlState;
use std::cell::Cell;

thread_local! {
    /// Set while memory_approve writes a proposal: its text was screened when it was proposed.
    static APPROVING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (memory_approve's write) without screening again what was screened when proposed:
/// what a flag held is now approved, and a superuser's per-call policy stays the one it met.
pub fn approving<T>(f: impl FnOnce() -> T) -> T {
    let was = APPROVING.with(|a| a.replace(true));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    APPROVING.with(|a| a.set(was));
    match out {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e),
    }
}

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

/// `s`, screened for a write of `what` (message, block, file, detail): redacted where the policy
/// says so, or refused (22023, naming the detector, never the value) where it blocks. Such a
/// write cannot wait for an approval, so what the policy flags is redacted here. Each decision
/// is an event of `user` (or the session's tenant): op `<action>_<what>` (`redact_message`,
/// `allow_file`, ...), the detector as category, never the value. A refusal is in the server
/// log instead, since its transaction, events included, rolls back.
pub fn text(what: &str, user: Option<&str>, s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    screened(&policy().flags_redacted(), what, user, s).text
}

/// An identifier a write stores (a thread id, run id, actor, category, tool call id or name,
/// store key or namespace label, memory-file path, entity alias, checkpoint id or namespace):
/// refused (22023, naming the argument and the detector, never the value) when it holds
/// anything the policy does not allow. Redacting a name would change what it names (two threads
/// would become one), so nothing is rewritten: the caller picks another name.
pub fn identifier(arg: &str, s: &str) {
    if s.is_empty() {
        return;
    }
    if let Some(f) = not_allowed(s) {
        pgrx::log!(
            "memory_ext: screening refused {arg}: it holds a {}",
            f.detector
        );
        raise(
            SqlState::InvalidParameterValue,
            format!(
                "{arg} contains a {}, which memory_ext.screen does not allow in a name",
                f.detector
            ),
            Some(format!(
                "a name is stored and shown as written: choose a {arg} without it"
            )),
        );
    }
}

/// Whether `s` holds anything the policy does not simply allow (a cheap look before a document
/// is parsed to be screened: most hold nothing).
pub fn holds_findings(s: &str) -> bool {
    not_allowed(s).is_some()
}

/// The first finding in `s` whose action under the policy is not `allow`.
fn not_allowed(s: &str) -> Option<screen::Finding> {
    let p = policy();
    screen::scan(s)
        .into_iter()
        .find(|f| p.action(f) != screen::Action::Allow)
}

/// [`identifier`] for each of `labels`.
pub fn identifiers<'a>(arg: &str, labels: impl IntoIterator<Item = &'a str>) {
    for l in labels {
        identifier(arg, l);
    }
}

/// One screening decision: (action, detector).
pub type Decision = (&'static str, &'static str);

/// Every decision of an outcome (a block raises before there is one).
fn decisions(o: &screen::Outcome) -> Vec<Decision> {
    [
        ("redact", &o.redacted),
        ("allow", &o.allowed),
        ("flag", &o.flagged),
    ]
    .into_iter()
    .flat_map(|(action, detectors)| detectors.iter().map(move |d| (action, *d)))
    .collect()
}

/// The detectors whose action was `flag` (the write path then holds the memory as a proposal
/// until approved, src/ops/write.rs).
pub fn flagged(decisions: &[Decision]) -> Vec<&'static str> {
    decisions
        .iter()
        .filter(|d| d.0 == "flag")
        .map(|d| d.1)
        .collect()
}

/// A memory's text screened: the text to store and its decisions, recorded by [`record`] once
/// the write path knows who writes next: on Citus one transaction must not write a tenant's
/// shards as two users.
pub struct Screened {
    pub text: String,
    pub decisions: Vec<Decision>,
}

/// Records decisions of a `what` write as events of `user`: op `<action>_<what>`, the detector
/// as category, never the value.
pub fn record(user: &str, what: &str, decisions: &[Decision]) {
    for (action, detector) in decisions {
        let op = format!("{action}_{what}");
        events::record(Event {
            category: Some(detector),
            ..Event::new(user, Node::Hotpath, &op)
        });
    }
}

/// The policy for a memory of `user` in `category`: a superuser's per-call `call` override over
/// `memory_ext.screen` (42501 for anyone else), else `memory_ext.screen` tightened by the
/// category's `"screen"` (memory_configure).
pub fn memory_policy(
    user: &str,
    category: Option<&str>,
    call: Option<&serde_json::Value>,
) -> Policy {
    let base = policy();
    if let Some(call) = call {
        // SAFETY: a plain read of the current role inside a transaction.
        if !unsafe { pgrx::pg_sys::superuser() } {
            raise(
                SqlState::InsufficientPrivilege,
                "only a superuser may override screening for a call (\"screen\")",
                Some("leave \"screen\" out; memory_configure sets a category's screening".into()),
            );
        }
        return base.with(&Policy::entries_of(call).unwrap_or_default());
    }
    let Some(category) = category else {
        return base;
    };
    let entries = spi::one_opt::<pgrx::JsonB>(
        "SELECT screen FROM memory.categories WHERE user_id = $1 AND name = $2",
        &[user.into(), category.into()],
        "reading a category's screening",
    );
    match entries.map(|j| Policy::entries_of(&j.0)) {
        Some(Ok(e)) => base.tightened(&e),
        _ => base,
    }
}

/// A memory's `s` under `policy` (from [`memory_policy`]): as [`text`], but what is flagged is
/// kept and named. Not screened again while memory_approve writes (see [`approving`]).
pub fn memory(policy: &Policy, s: &str) -> Screened {
    if s.is_empty() || APPROVING.with(Cell::get) {
        return Screened {
            text: s.to_string(),
            decisions: vec![],
        };
    }
    let o = decide(policy, "memory", s);
    Screened {
        decisions: decisions(&o),
        text: o.text,
    }
}

/// `v` with every string in it screened as [`text`] screens one (tool calls' arguments, a
/// session item kept verbatim), under one reading of the policy.
pub fn json(what: &str, user: Option<&str>, v: &serde_json::Value) -> serde_json::Value {
    json_with(&policy().flags_redacted(), what, user, v)
}

fn json_with(
    policy: &Policy,
    what: &str,
    user: Option<&str>,
    v: &serde_json::Value,
) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if !s.is_empty() => Value::String(screened(policy, what, user, s).text),
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

/// `s` under `policy`, refused (22023) where a finding's action is `block`.
fn decide(policy: &Policy, what: &str, s: &str) -> screen::Outcome {
    let o = screen::apply(policy, s);
    if let Some(detector) = o.blocked {
        pgrx::log!("memory_ext: screening refused a {what} write: it holds a {detector}");
        raise(
            SqlState::InvalidParameterValue,
            format!("this {what} contains a {detector}, which memory_ext.screen blocks"),
            Some("remove it and write again, or ask the operator about memory_ext.screen".into()),
        );
    }
    o
}

fn screened(policy: &Policy, what: &str, user: Option<&str>, s: &str) -> screen::Outcome {
    let o = decide(policy, what, s);
    let d = decisions(&o);
    if !d.is_empty() {
        if let Some(user) = user.map(str::to_string).or_else(tenant::current) {
            record(&user, what, &d);
        }
    }
    o
}
