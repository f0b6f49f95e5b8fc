//! Extraction (docs/design.md "Extraction"): a thread's new messages become memories, written
//! through the ordinary write path (dedupe, relations, history, change log). The background
//! worker runs it for every thread with messages past its watermark (src/worker/jobs.rs);
//! `memory_extract(thread_id)` runs it now for one thread (src/api/extract.rs). What is checked
//! and how the rules work is in crates/memory_core/src/extract.rs.
//!
//! # Exactly once
//! A batch is one transaction: the watermark row is locked, the turns after it are read, the
//! memories written, and the watermark moved past the turns read, then commit. A worker killed
//! anywhere in between rolls all of it back and the next run reads the same turns again; no
//! turn is skipped and none is written twice. An LLM that fails (down, too slow, an HTTP error)
//! leaves the watermark where it was and schedules a retry with backoff; after [`MAX_ATTEMPTS`]
//! the batch goes through the rules instead, so one bad thread is never retried forever and
//! never holds up the others. An answer that is not what was asked for (not JSON, a refusal,
//! cut short with nothing whole in it) is not asked again — at temperature 0 a model answers
//! the same — the batch goes through the rules at once and the answer is counted as rejected.

use crate::embed;
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::owner::as_owner;
use crate::pg::{spi, subxact, vector};
use memory_core::extract::{self, Candidate, Kind, Turn};
use memory_core::tokens::Encoding;
use serde_json::{json, Value};

/// LLM failures of one batch before it goes through the rules instead.
pub const MAX_ATTEMPTS: i32 = 5;
/// Seconds before the first retry; each further failure waits 4 times longer
/// (sql/queries/extract_failed.sql): 30 s, 2 min, 8 min, 32 min.
const BACKOFF_S: f64 = 30.0;
/// Earlier turns shown to the LLM for context.
const CONTEXT_TURNS: i64 = 4;
/// Known memories shown to the LLM (what it may supersede and must not repeat).
const KNOWN: i64 = 15;
/// Characters of a turn the LLM sees.
const TURN_CHARS: usize = 2000;
/// A batch whose user turns are all shorter than this is not worth an LLM call (docs/design.md
/// "Procedures and extraction": "trigger only when user turn length > N chars"); the rules still
/// look at it.
const MIN_USER_CHARS: usize = 20;
/// Most tokens of the answer: room for a few facts a turn, at most 1,200. A model that rambles
/// is cut there (what was whole before the cut is kept: crates/memory_core/src/answer.rs), and a
/// short batch does not wait for 1,200 tokens of it.
fn max_answer_tokens(turns: usize) -> u32 {
    (200 + 150 * turns as u32).min(1200)
}

/// Why a batch's LLM call gave nothing to write.
enum CallError {
    /// The endpoint failed: worth a retry later.
    Failed(String),
    /// The model answered something unusable: asking again gets the same.
    Unusable(String),
}

/// What one batch (or several) did.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub batches: i64,
    pub turns: i64,
    pub created: i64,
    pub updated: i64,
    pub unchanged: i64,
    pub superseded: i64,
    pub proposed: i64,
    pub rejected: i64,
    pub capped: i64,
    pub calls: i64,
    pub tokens_in: i64,
    pub tokens_out: i64,
    pub failed: i64,
    pub method: Option<&'static str>,
    pub error: Option<String>,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.batches += o.batches;
        self.turns += o.turns;
        self.created += o.created;
        self.updated += o.updated;
        self.unchanged += o.unchanged;
        self.superseded += o.superseded;
        self.proposed += o.proposed;
        self.rejected += o.rejected;
        self.capped += o.capped;
        self.calls += o.calls;
        self.tokens_in += o.tokens_in;
        self.tokens_out += o.tokens_out;
        self.failed += o.failed;
        self.method = o.method.or(self.method);
        if o.error.is_some() {
            self.error.clone_from(&o.error);
        }
    }

    pub fn json(&self) -> Value {
        json!({
            "batches": self.batches, "turns": self.turns, "created": self.created,
            "updated": self.updated, "unchanged": self.unchanged, "superseded": self.superseded,
            "proposed": self.proposed, "rejected": self.rejected, "capped": self.capped, "llm_calls": self.calls,
            "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "failed": self.failed,
            "method": self.method, "error": self.error,
        })
    }
}

/// How a batch ended.
pub enum Batch {
    /// Nothing past the watermark (or the row is locked by another extraction).
    Idle,
    /// The watermark moved.
    Done(Counts),
    /// The LLM failed; the thread is retried later.
    Failed(Counts),
}

struct Msg {
    turn: Turn,
    at: String,
}

/// One batch of `thread`, in the caller's transaction. `skip_locked`: the worker passes over a
/// thread another extraction holds; memory_extract waits for it.
pub fn batch(user: &str, thread: &str, skip_locked: bool) -> Batch {
    let lock = lock_thread(user, thread, skip_locked);
    let Some((watermark, attempts)) = lock else {
        return Batch::Idle;
    };
    let msgs = new_messages(user, thread, watermark);
    let Some(upto) = msgs.last().map(|m| m.turn.seq) else {
        return Batch::Idle;
    };
    let turns: Vec<Turn> = msgs
        .iter()
        .filter(|m| matches!(m.turn.role.as_str(), "user" | "assistant"))
        .map(|m| m.turn.clone())
        .collect();
    let mut counts = Counts {
        batches: 1,
        turns: turns.len() as i64,
        ..Default::default()
    };
    let (written_today, insight_recent) = spi::row(
        include_str!("../../sql/queries/extract_budget.sql"),
        &[user.into()],
        "reading the extraction budget",
        |r| {
            Ok((
                r.get::<i32>(1)?.unwrap_or(0),
                r.get::<bool>(2)?.unwrap_or(false),
            ))
        },
    )
    .unwrap_or((0, false));
    let remaining = (gucs::extract_daily_cap() - written_today).max(0) as usize;

    // The LLM when one is configured and the batch has a user turn worth a call; the rules
    // otherwise, and after MAX_ATTEMPTS failed calls.
    let worth_a_call = turns
        .iter()
        .any(|t| t.role == "user" && t.text.chars().count() >= MIN_USER_CHARS);
    let mut recovered: Option<String> = None;
    // Candidates, and the known memories their `supersedes` indexes point into (LLM only).
    let (candidates, known): (Vec<Candidate>, Vec<String>) = match gucs::llm() {
        Some(cfg) if worth_a_call && remaining > 0 && attempts < MAX_ATTEMPTS => {
            counts.method = Some("llm");
            match llm_candidates(&cfg, user, watermark, thread, &turns, &mut counts) {
                Ok(c) => c,
                Err(CallError::Failed(e)) => return failed(user, thread, e, counts),
                Err(CallError::Unusable(e)) => {
                    counts.rejected += 1;
                    counts.method = Some("rules");
                    recovered = Some(format!(
                        "the LLM's answer on messages after seq {watermark} was unusable ({e}); the rules extracted them instead"
                    ));
                    (extract::rules(&turns), vec![])
                }
            }
        }
        llm => {
            if llm.is_some() && attempts >= MAX_ATTEMPTS {
                recovered = Some(format!(
                    "the LLM failed {attempts} times on messages after seq {watermark}; the rules extracted them instead"
                ));
            }
            counts.method = Some("rules");
            (extract::rules(&turns), vec![])
        }
    };
    let (kept, capped) = extract::cap(candidates, remaining);
    counts.capped = capped as i64;
    let method = counts.method.unwrap_or("rules");
    write_kept(user, thread, &kept, &known, &msgs, method, &mut counts);
    // The theory-of-mind pass: a call of its own after the facts, at most one a
    // day per tenant, never failing the batch.
    let mut tom_ran = false;
    if method == "llm" && !insight_recent {
        if let Some(cfg) = gucs::llm() {
            tom_ran = true;
            let new: Vec<String> = kept
                .iter()
                .filter(|c| c.kind == Kind::Fact)
                .map(|c| c.text.clone())
                .collect();
            let at = msgs.last().map(|m| m.at.clone());
            theory_of_mind(&cfg, user, thread, &turns, &new, at, &mut counts);
        }
    }
    let writes = counts.created + counts.updated;
    as_owner(|| {
        spi::run(
            include_str!("../../sql/queries/extract_done.sql"),
            &[
                user.into(),
                thread.into(),
                upto.into(),
                recovered.clone().into(),
                (writes as i32).into(),
                (counts.calls as i32).into(),
                counts.tokens_in.into(),
                counts.tokens_out.into(),
                tom_ran.into(),
            ],
            "moving the extraction watermark",
        )
    });
    events::record(Event {
        thread: Some(thread),
        status: if writes > 0 { "ok" } else { "skipped" },
        ..Event::new(user, Node::Worker, "extract")
    });
    counts.error = recovered;
    Batch::Done(counts)
}

/// Starts and locks `thread`'s extraction: its watermark and failed attempts, or `None` when
/// `skip_locked` and another extraction holds it.
fn lock_thread(user: &str, thread: &str, skip_locked: bool) -> Option<(i64, i32)> {
    let (u, t) = (user.to_string(), thread.to_string());
    as_owner(|| {
        spi::run(
            include_str!("../../sql/queries/extract_start.sql"),
            &[u.as_str().into(), t.as_str().into()],
            "starting a thread's extraction",
        );
        spi::row(
            &include_str!("../../sql/queries/extract_lock.sql")
                .replace("{skip}", if skip_locked { "SKIP LOCKED" } else { "" }),
            &[u.as_str().into(), t.as_str().into()],
            "locking a thread's extraction",
            |r| Ok((r.get::<i64>(1)?.unwrap_or(0), r.get::<i32>(2)?.unwrap_or(0))),
        )
    })
}

/// The thread's messages after `watermark`, at most `memory_ext.extract_batch`.
fn new_messages(user: &str, thread: &str, watermark: i64) -> Vec<Msg> {
    spi::rows(
        include_str!("../../sql/queries/extract_messages.sql"),
        &[
            user.into(),
            thread.into(),
            watermark.into(),
            i64::from(gucs::extract_batch()).into(),
        ],
        "reading a thread's new messages",
        |r| {
            Ok(Msg {
                turn: Turn {
                    seq: r.get::<i64>(1)?.unwrap_or(0),
                    role: r.get::<String>(2)?.unwrap_or_default(),
                    name: r.get::<String>(3)?,
                    text: r.get::<String>(4)?.unwrap_or_default(),
                },
                at: r.get::<String>(5)?.unwrap_or_default(),
            })
        },
    )
}

/// Writes the kept candidates through memory_write's path, each in a subtransaction: one the
/// write path refuses (say, the memory it supersedes was deleted meanwhile) is counted and left
/// out; the rest of the batch stands.
fn write_kept(
    user: &str,
    thread: &str,
    kept: &[Candidate],
    known: &[String],
    msgs: &[Msg],
    method: &str,
    counts: &mut Counts,
) {
    for c in kept {
        let old = match c.supersedes {
            Some(i) => known.get(i).cloned(),
            None if method == "rules" && c.kind == Kind::Fact => rule_supersedes(user, c),
            None => None,
        };
        let at = msgs
            .iter()
            .find(|m| m.turn.seq == c.seq)
            .map(|m| m.at.clone());
        let req = request(user, thread, c, at, old.as_deref(), method);
        // Each memory in a subtransaction: one the write path refuses (say, the memory it
        // supersedes was deleted meanwhile) is counted and left out; the rest of the batch
        // stands.
        match subxact::catching(|| crate::ops::write::write_json(&req)) {
            Ok(out) => {
                match out["event"].as_str() {
                    Some("created") => counts.created += 1,
                    Some("updated") => counts.updated += 1,
                    Some("proposed") => counts.proposed += 1,
                    _ => counts.unchanged += 1,
                }
                if out.get("superseded").is_some() {
                    counts.superseded += 1;
                }
            }
            Err(e) => {
                counts.rejected += 1;
                pgrx::debug1!("extraction left out a memory of thread {thread}: {e}");
            }
        }
    }
}

/// The theory-of-mind pass over a batch: the tenant's latest memories, the facts
/// just learned and the end of the conversation go to the model with the prompt of crates/memory_core/prompts/tom.txt
/// constraints and a 220-token answer; 1-3 insights come back and are written as memories of
/// kind `insight`, category `relationship_dynamic`. An insight the model ties to a benign field
/// (`tone`, `goals`) is filed under that field instead, with its confidence: a corroborating
/// signal, written at once when the model is sure enough (src/ops/consent.rs).
/// A failed call or a bad answer is counted and dropped: insights are never worth a retry.
fn theory_of_mind(
    cfg: &memory_providers::llm::LlmConfig,
    user: &str,
    thread: &str,
    turns: &[Turn],
    new: &[String],
    at: Option<String>,
    counts: &mut Counts,
) {
    let Some(last) = turns.last().map(|t| t.seq) else {
        return;
    };
    let activity: Vec<String> = spi::rows(
        include_str!("../../sql/queries/extract_activity.sql"),
        &[user.into(), (extract::TOM_ACTIVITY as i64).into()],
        "reading the latest memories",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    );
    let input = extract::tom_input(&activity, new, turns);
    counts.calls += 1;
    let answer = match memory_providers::llm::chat_full(
        cfg,
        extract::TOM_PROMPT,
        &input,
        true,
        Some(extract::TOM_MAX_TOKENS),
    ) {
        Ok(a) => a,
        Err(e) => {
            pgrx::debug1!("theory of mind skipped for thread {thread}: {e}");
            return;
        }
    };
    counts.tokens_in += answer.tokens_in.map(|n| n as i64).unwrap_or_else(|| {
        (Encoding::Cl100kBase.count(extract::TOM_PROMPT) + Encoding::Cl100kBase.count(&input))
            as i64
    });
    counts.tokens_out += answer
        .tokens_out
        .map(|n| n as i64)
        .unwrap_or_else(|| Encoding::Cl100kBase.count(&answer.text) as i64);
    let insights = match extract::parse_tom(&answer.text, last) {
        Ok(i) => i,
        Err(e) => {
            counts.rejected += 1;
            pgrx::debug1!("theory of mind answer for thread {thread} left out: {e}");
            return;
        }
    };
    let benign = gucs::corroborate_categories();
    for i in insights {
        let mut c = i.memory.clone();
        let signal = i.field.filter(|f| benign.contains(f));
        if let Some(f) = &signal {
            c.category = Some(f.clone());
        }
        let mut req = request(user, thread, &c, at.clone(), None, "llm");
        req["metadata"]["pass"] = json!("theory_of_mind");
        if let (Some(_), Some(conf)) = (&signal, i.confidence) {
            req["confidence"] = json!(conf);
        }
        match subxact::catching(|| crate::ops::write::write_json(&req)) {
            Ok(out) => match out["event"].as_str() {
                Some("created") => counts.created += 1,
                Some("updated") => counts.updated += 1,
                Some("proposed") => counts.proposed += 1,
                _ => counts.unchanged += 1,
            },
            Err(e) => {
                counts.rejected += 1;
                pgrx::debug1!("theory of mind left out an insight of thread {thread}: {e}");
            }
        }
    }
}

/// The LLM failed on this batch: the watermark stays, the thread is retried after a backoff.
fn failed(user: &str, thread: &str, e: String, mut counts: Counts) -> Batch {
    let n = as_owner(|| {
        spi::one_opt::<i32>(
            include_str!("../../sql/queries/extract_failed.sql"),
            &[
                user.into(),
                thread.into(),
                BACKOFF_S.into(),
                e.as_str().into(),
                (counts.calls as i32).into(),
                counts.tokens_in.into(),
                counts.tokens_out.into(),
            ],
            "recording a failed extraction",
        )
    })
    .unwrap_or(1);
    events::record(Event {
        thread: Some(thread),
        status: "error",
        ..Event::new(user, Node::Worker, "extract")
    });
    counts.failed = 1;
    counts.error = Some(format!("{e} (attempt {n} of {MAX_ATTEMPTS})"));
    Batch::Failed(counts)
}

/// The memory_write request for one candidate.
fn request(
    user: &str,
    thread: &str,
    c: &Candidate,
    at: Option<String>,
    supersedes: Option<&str>,
    method: &str,
) -> Value {
    let mut req = json!({
        "user_id": user, "text": c.text, "kind": c.kind.memory_kind(), "thread_id": thread,
        "importance": c.importance, "tags": c.tags,
        "metadata": {"source": "extraction", "method": method, "seq": c.seq},
        // Concluded, not stated by the user to the system: a sensitive field becomes a consent
        // proposal (src/ops/consent.rs).
        "source": "inferred",
    });
    if let Some(cat) = &c.category {
        req["category"] = json!(cat);
    }
    if let Some(a) = &c.about {
        req["actor_id"] = json!(a);
    }
    if let Some(at) = at {
        req["happened_at"] = json!(at);
    }
    if let Some(old) = supersedes {
        req["supersedes"] = json!(old);
    }
    if let Some(conf) = c.confidence {
        // How sure the extraction is: the consent gate reads it (a sure inference to a
        // corroborate field needs no second sign), and it stays with the memory.
        req["confidence"] = json!(conf);
        req["metadata"]["confidence"] = json!(conf);
    }
    req
}

/// The no-LLM supersede rule (memory_core::extract::supersedes) against the tenant's active
/// facts about the same subject; the newest match.
fn rule_supersedes(user: &str, c: &Candidate) -> Option<String> {
    let subject = c
        .about
        .clone()
        .unwrap_or_else(|| "the user".into())
        .to_lowercase();
    spi::rows(
        include_str!("../../sql/queries/extract_same_subject.sql"),
        &[user.into(), subject.as_str().into()],
        "finding facts about the same subject",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
            ))
        },
    )
    .into_iter()
    .find(|(_, old)| extract::supersedes(&c.text, old))
    .map(|(id, _)| id)
}

/// One structured LLM call for the batch: the turns, a few earlier ones, and the memories
/// nearest to what the user said (which the answer may supersede by number).
fn llm_candidates(
    cfg: &memory_providers::llm::LlmConfig,
    user: &str,
    watermark: i64,
    thread: &str,
    turns: &[Turn],
    counts: &mut Counts,
) -> Result<(Vec<Candidate>, Vec<String>), CallError> {
    // Insights have a pass of their own (theory_of_mind).
    let insights = false;
    let mut context: Vec<Turn> = spi::rows(
        include_str!("../../sql/queries/extract_context.sql"),
        &[
            user.into(),
            thread.into(),
            watermark.into(),
            CONTEXT_TURNS.into(),
        ],
        "reading earlier turns",
        |r| {
            Ok(Turn {
                seq: r.get::<i64>(1)?.unwrap_or(0),
                role: r.get::<String>(2)?.unwrap_or_default(),
                name: r.get::<String>(3)?,
                text: r.get::<String>(4)?.unwrap_or_default(),
            })
        },
    );
    context.reverse();
    let said: String = turns
        .iter()
        .filter(|t| t.role == "user")
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let known: Vec<(String, String, Option<String>)> = match embed::embed(&[said.as_str()]) {
        Ok((model, mut v)) => match v.pop() {
            Some(v) => nearest(user, &model.id, &v),
            None => vec![],
        },
        // Without vectors the model is shown no known memories: it can still extract, only
        // not supersede.
        Err(_) => vec![],
    };
    let shown: Vec<(String, Option<String>)> = known
        .iter()
        .map(|(_, t, a)| (t.clone(), a.clone()))
        .collect();
    let input = extract::llm_input(&context, turns, &shown, insights, TURN_CHARS);
    counts.calls += 1;
    let answer = memory_providers::llm::chat_full(
        cfg,
        extract::PROMPT,
        &input,
        true,
        Some(max_answer_tokens(turns.len())),
    )
    .map_err(|e| CallError::Failed(e.to_string()))?;
    // Tokens as the endpoint reports them, else counted here (cl100k_base).
    counts.tokens_in += answer.tokens_in.map(|n| n as i64).unwrap_or_else(|| {
        (Encoding::Cl100kBase.count(extract::PROMPT) + Encoding::Cl100kBase.count(&input)) as i64
    });
    counts.tokens_out += answer
        .tokens_out
        .map(|n| n as i64)
        .unwrap_or_else(|| Encoding::Cl100kBase.count(&answer.text) as i64);
    let shown: Vec<&str> = known.iter().map(|(_, text, _)| text.as_str()).collect();
    let parsed = extract::parse_answer(&answer.text, turns, &shown, insights)
        .map_err(CallError::Unusable)?;
    counts.rejected += parsed.rejected() as i64;
    Ok((
        parsed.candidates,
        known.into_iter().map(|(id, _, _)| id).collect(),
    ))
}

/// The tenant's active facts nearest to `v`: (id, text, actor).
fn nearest(user: &str, model: &str, v: &[f32]) -> Vec<(String, String, Option<String>)> {
    let q = include_str!("../../sql/queries/extract_known.sql")
        .replace("{vt}", &vector::ty_of(model, v.len()))
        .replace("{op}", &vector::cosine_op())
        .replace("{model}", &vector::literal(model));
    vector::with_iterative_scan(|| {
        spi::rows(
            &q,
            &[user.into(), embed::vector_text(v).into(), KNOWN.into()],
            "finding known facts",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?.unwrap_or_default(),
                    r.get::<String>(3)?,
                ))
            },
        )
    })
}

/// memory_extract: every batch of the thread now, in the caller's transaction, until nothing
/// is left past the watermark or the LLM fails (the thread is then retried by the worker).
/// `{batches, turns, created, ..., method, error}`.
pub fn run_thread(user: &str, thread: &str) -> Value {
    let mut total = Counts::default();
    loop {
        match batch(user, thread, false) {
            Batch::Idle => break,
            Batch::Done(c) => total.add(&c),
            Batch::Failed(c) => {
                total.add(&c);
                break;
            }
        }
        pgrx::check_for_interrupts!();
    }
    let mut v = total.json();
    v["extracted_seq"] = json!(spi::one_opt::<i64>(
        "SELECT extracted_seq FROM memory.extractions WHERE user_id = $1 AND thread_id = $2",
        &[user.into(), thread.into()],
        "reading the watermark",
    )
    .unwrap_or(0));
    v
}

/// The worker's record of a batch that raised (not an LLM failure: say, a lock timeout), in a
/// transaction of its own: the thread is retried after a backoff like any failed batch.
pub fn record_error(user: &str, thread: &str, error: &str) {
    let _ = failed(user, thread, error.to_string(), Counts::default());
}

/// Threads with messages past their watermark and no retry pending, for the worker.
pub fn due(limit: i64) -> Vec<(String, String)> {
    spi::rows(
        include_str!("../../sql/queries/extract_due.sql"),
        &[limit.into()],
        "listing threads to extract",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
            ))
        },
    )
}
