//! Refining (docs/api.md "Refining"): what an application call writes at once without the
//! LLM — a compaction summary (`compact_thread`, the tools), an episode (`episode_write`), a
//! captured output's description (`memory_capture`) — is marked `pending` when an LLM is
//! configured, and the worker's `refine` job puts the model's version in its place. Nothing an
//! application calls waits for a model; the worker's own writes (ending a run) ask it directly.
//!
//! Each kind's refine lives with its feature (src/ops/compaction.rs, src/ops/episodes.rs,
//! src/ops/detail.rs); this module has what they share and the queue
//! (sql/queries/refine_due.sql).

use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::spi;
use memory_providers::llm::LlmConfig;

/// Who may wait for the LLM: `Now` the worker (it asks the model and falls back to the
/// extractive version when the model fails), `Later` an application call (the extractive
/// version now, the model's from the worker).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Llm {
    Now,
    Later,
}

/// A text written now with the model or without it — the one rule compaction and episodes
/// share: `Now` with an LLM configured asks it (`ask`) and falls back to `extract` with a NOTICE
/// when it fails; `Later` with an LLM configured writes `extract` marked pending; no LLM,
/// `extract`. Returns the text, its method (`llm` or `extractive`) and whether it is pending.
pub fn write_with<T>(
    llm: Llm,
    what: &str,
    ask: impl FnOnce(&LlmConfig) -> Result<T, String>,
    extract: impl FnOnce() -> T,
) -> (T, &'static str, bool) {
    let Some(cfg) = gucs::llm() else {
        return (extract(), "extractive", false);
    };
    if llm == Llm::Later {
        return (extract(), "extractive", true);
    }
    match ask(&cfg) {
        Ok(t) => (t, "llm", false),
        Err(e) => {
            pgrx::notice!("{what} without the LLM: {e}");
            (extract(), "extractive", false)
        }
    }
}

/// Attempts the worker makes at a pending item before the version written without the model
/// stays for good.
pub const REFINE_ATTEMPTS: i64 = 3;

/// What the worker made of one pending item.
#[derive(Debug, Clone, PartialEq)]
pub enum Refined {
    /// The model's version is in place.
    Done,
    /// The model failed this time; the item stays pending for the next tick.
    Retry(String),
    /// The model failed the last allowed time (with why), or the item no longer needs it: the
    /// version written without the model stays, no longer pending.
    Kept(Option<String>),
    /// Nothing pending there any more (refined, erased, or taken by another run).
    Gone,
}

/// The kinds of pending items, as sql/queries/refine_due.sql names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Summary,
    Episode,
    Description,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        match s {
            "summary" => Some(Kind::Summary),
            "episode" => Some(Kind::Episode),
            "description" => Some(Kind::Description),
            _ => None,
        }
    }
}

/// Up to `limit` pending items (tenant, kind, id), oldest first, tenants taking turns.
pub fn due(limit: i64) -> Vec<(String, Kind, String)> {
    spi::rows(
        include_str!("../../sql/queries/refine_due.sql"),
        &[limit.into()],
        "finding what waits for the model",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
            ))
        },
    )
    .into_iter()
    .filter_map(|(u, k, i)| Kind::parse(&k).map(|k| (u, k, i)))
    .collect()
}

/// Refines one item with the configured LLM, in the caller's transaction (the tenant already
/// set); `Gone` when no LLM is configured (what is pending waits for one).
pub fn one(user: &str, kind: Kind, id: &str) -> Refined {
    let Some(cfg) = gucs::llm() else {
        return Refined::Gone;
    };
    match kind {
        Kind::Summary => crate::ops::compaction::refine(&cfg, user, id),
        Kind::Episode => crate::ops::episodes::refine(&cfg, user, id),
        Kind::Description => crate::ops::detail::refine(&cfg, user, id),
    }
}

/// The event of one attempt (`op` `refine`, `ok` or `error`), naming the item's memory or
/// message.
pub fn event(user: &str, thread: Option<&str>, memory_id: Option<&str>, ok: bool) {
    events::record(Event {
        thread,
        memory_id,
        status: if ok { "ok" } else { "error" },
        ..Event::new(user, Node::Worker, "refine")
    });
}

/// A model's text screened as a write of `what` is (src/ops/screen.rs): redacted where the
/// policy says so. A policy that refuses it makes the attempt a failed one (Err), never an error
/// that would roll the attempt's count back with it and have the item asked again forever.
pub fn screened(what: &str, user: &str, text: &str) -> Result<String, String> {
    crate::pg::subxact::catching(|| crate::ops::screen::text(what, Some(user), text))
        .map_err(|e| format!("screening refused the model's text: {e}"))
}

/// The JSON metadata after a failed attempt: the count of attempts raised, and the pending mark
/// dropped at the last one. Returns the outcome to report.
pub fn failed(meta: &mut serde_json::Value, error: String) -> Refined {
    let n = meta["llm_attempts"].as_i64().unwrap_or(0) + 1;
    meta["llm_attempts"] = serde_json::json!(n);
    if n >= REFINE_ATTEMPTS {
        if let Some(o) = meta.as_object_mut() {
            o.remove("pending");
        }
        Refined::Kept(Some(error))
    } else {
        Refined::Retry(error)
    }
}

/// The JSON metadata once the model's version is in: `method` `llm`, no mark, no count.
pub fn done(meta: &mut serde_json::Value, method_key: &str) {
    if let Some(o) = meta.as_object_mut() {
        o.remove("pending");
        o.remove("llm_attempts");
        o.insert(method_key.into(), serde_json::json!("llm"));
    }
}
