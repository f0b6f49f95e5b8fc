//! Write-after-run episodes (docs/design.md "Episodes"): `episode_write` summarises a run's messages into a
//! memory file under `episodes/YYYY-MM-DD/` in the markdown template of crates/memory_core/src/episodes.rs, and indexes it as an
//! episodic memory so memory_query recalls it ("remember when we worked on X?").
//!
//! A run is the thread's messages since its previous episode (or, for a `run_id` that already
//! has an episode, since that episode began: writing it again after more messages rewrites the
//! same file and memory instead of adding a second one).

use crate::error::raise;
use crate::gucs;
use crate::ops::files;
use crate::ops::idempotency;
use crate::ops::refine::{self, Llm, Refined};
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, tenant};
use memory_core::request::Idempotency;
use memory_core::summary::{self, Episode, Turn};
use memory_core::SqlState;
use serde_json::{json, Value};

/// Characters of each message the LLM and the extractive summary see (a tool's 10 MB output is
/// not what an episode is about).
const MESSAGE_CHARS: usize = 2000;
const LLM_TRANSCRIPT_CHARS: usize = 60_000;
/// The episode's answer cap: its JSON (title, topic, outcome, tags, up to 7 bullets) fits in
/// about 300 tokens; a model that rambles is cut, not waited for.
const EPISODE_MAX_TOKENS: u32 = 500;

/// This run's episode, if it has one: (path, memory id, from_seq, to_seq).
type RunEpisode = (String, Option<String>, i64, i64);

/// This run's episode, and the last seq any episode of the thread covers.
fn previous(user: &str, thread: &str, run: Option<&str>) -> (Option<RunEpisode>, i64) {
    let same_run = run.and_then(|r| {
        spi::row(
            include_str!("../../sql/queries/episodes_run.sql"),
            &[user.into(), thread.into(), r.into()],
            "finding the run's episode",
            |row| {
                Ok((
                    row.get::<String>(1)?.unwrap_or_default(),
                    row.get::<String>(2)?,
                    row.get::<i64>(3)?.unwrap_or(1),
                    row.get::<i64>(4)?.unwrap_or(0),
                ))
            },
        )
    });
    let last_to = spi::one_opt::<i64>(
        include_str!("../../sql/queries/episodes_last.sql"),
        &[user.into(), thread.into()],
        "finding the last episode",
    )
    .unwrap_or(0);
    (same_run, last_to)
}

/// The LLM's episode of a run, from its JSON answer in crates/memory_core/src/summary.rs's
/// template.
fn llm_episode(
    cfg: &memory_providers::llm::LlmConfig,
    turns: &[Turn],
    date: &str,
    refs: &str,
) -> Result<Episode, String> {
    let t = summary::transcript(None, turns, MESSAGE_CHARS, LLM_TRANSCRIPT_CHARS);
    let a = memory_providers::llm::chat_full(
        cfg,
        summary::EPISODE_PROMPT,
        &t,
        true,
        Some(EPISODE_MAX_TOKENS),
    )
    .map_err(|e| e.to_string())?
    .text;
    summary::parse_episode_answer(&a, date, refs)
        .ok_or_else(|| "its answer was not the JSON asked for".to_string())
}

/// `episodes/<date>/<title-slug>-<run id or last seq>.md`.
fn episode_path(date: &str, title: &str, run: Option<&str>, to_seq: i64) -> String {
    let slug = memory_core::detail::slug(title)
        .unwrap_or_else(|| "episode".into())
        .replace('_', "-");
    let tail = match run.and_then(memory_core::detail::slug) {
        Some(r) => r.replace('_', "-"),
        None => format!("seq{to_seq}"),
    };
    format!("episodes/{date}/{slug}-{tail}.md")
}

/// episode_write: summarises the run's messages into an episode file and an episodic memory.
/// Returns `{path, memory_id, event, from_seq, to_seq, messages, method, content}`. P0002 when
/// the thread is unknown or has no message since its last episode.
pub fn write(
    user_id: Option<&str>,
    thread: &str,
    run: Option<&str>,
    key: Option<&Idempotency>,
) -> Value {
    let user = tenant::resolve(user_id);
    idempotency::once(&user, "episode_write", key, || {
        write_for(&user, thread, run, Llm::Later).unwrap_or_else(|| {
            raise(
                SqlState::NoDataFound,
                format!("thread \"{thread}\" has no messages since its last episode"),
                Some("append the run's messages first (message_append)".into()),
            )
        })
    })
}

/// The episode of `user`'s run, or `None` when the thread has no message since its last one.
fn write_for(user: &str, thread: &str, run: Option<&str>, llm: Llm) -> Option<Value> {
    let user = user.to_string();
    // One episode at a time per thread: the range below must not be taken twice.
    let exists = spi::one_opt::<i32>(
        "SELECT 1 FROM memory.threads WHERE user_id = $1 AND thread_id = $2 FOR UPDATE",
        &[user.as_str().into(), thread.into()],
        "locking the thread",
    );
    if exists.is_none() {
        raise(
            SqlState::NoDataFound,
            format!("thread \"{thread}\" not found"),
            None,
        );
    }
    let (same_run, last_to) = previous(&user, thread, run);
    let (from, covered) = match &same_run {
        Some((_, _, f, t)) => (*f, *t),
        None => (last_to + 1, last_to),
    };
    let rows = run_messages(&user, thread, from);
    if rows.last().is_none_or(|r| r.0 <= covered) {
        return None;
    }
    let (turns, date, refs) = run_text(thread, run, &rows);
    let (ep, method, pending) = refine::write_with(
        llm,
        "writing the episode",
        |cfg| llm_episode(cfg, &turns, &date, &refs),
        || summary::episode_extract(&turns, &date, &refs),
    );
    let path = match &same_run {
        Some((p, _, _, _)) => p.clone(),
        None => episode_path(&date, &ep.title, run, rows[rows.len() - 1].0),
    };
    let memory_id = same_run.as_ref().and_then(|s| s.1.clone());
    Some(save(
        &user,
        thread,
        run,
        &rows,
        (&ep, method, pending),
        &path,
        memory_id.as_deref(),
        same_run.is_some(),
    ))
}

/// A run's messages from `from` on: (seq, role, content cut to MESSAGE_CHARS, day).
type Row = (i64, String, String, String);

fn run_messages(user: &str, thread: &str, from: i64) -> Vec<Row> {
    spi::rows(
        include_str!("../../sql/queries/episodes_messages.sql"),
        &[
            user.into(),
            thread.into(),
            from.into(),
            (MESSAGE_CHARS as i32).into(),
        ],
        "reading the run's messages",
        |r| {
            Ok((
                r.get::<i64>(1)?.unwrap_or(0),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
                r.get::<String>(4)?.unwrap_or_default(),
            ))
        },
    )
}

/// The turns an episode summarises, its date (the last message's day) and its refs line.
fn run_text(thread: &str, run: Option<&str>, rows: &[Row]) -> (Vec<Turn>, String, String) {
    let (first_seq, last_seq) = (rows[0].0, rows[rows.len() - 1].0);
    let date = rows[rows.len() - 1].3.clone();
    let turns: Vec<Turn> = rows
        .iter()
        .map(|r| Turn {
            label: summary::role_label(&r.1).into(),
            text: r.2.clone(),
        })
        .collect();
    let refs = match run {
        Some(r) => format!("thread_id={thread}, run_id={r}"),
        None => format!("thread_id={thread}, messages={first_seq}-{last_seq}"),
    };
    (turns, date, refs)
}

/// Writes an episode: its file at `path` and its Layer-1 memory (`memory_id`: the one it
/// replaces, when still active). The episode's JSON answer.
#[allow(clippy::too_many_arguments)]
fn save(
    user: &str,
    thread: &str,
    run: Option<&str>,
    rows: &[Row],
    (ep, method, pending): (&Episode, &str, bool),
    path: &str,
    memory_id: Option<&str>,
    update: bool,
) -> Value {
    let (first_seq, last_seq) = (rows[0].0, rows[rows.len() - 1].0);
    let content = summary::render_episode(ep);
    // The Layer-1 memory: the same write path as any memory (an episode of the same run updates
    // its memory rather than adding one).
    let happened = spi::one_opt::<String>(
        include_str!("../../sql/queries/episodes_time.sql"),
        &[
            user.into(),
            thread.into(),
            first_seq.into(),
            last_seq.into(),
        ],
        "reading the run's time",
    );
    let mut req = json!({
        "user_id": user, "kind": "episodic", "text": summary::episode_memory_text(ep),
        "thread_id": thread, "tags": ep.tags, "metadata": {"path": path},
        "content": content,
    });
    if let Some(r) = run {
        req["run_id"] = json!(r);
    }
    if let Some(h) = happened {
        req["happened_at"] = json!(h);
    }
    if let Some(mid) = memory_id {
        let active = spi::one_opt::<bool>(
            "SELECT state = 'active' FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.into(), mid.into()],
            "reading the episode's memory",
        );
        if active == Some(true) {
            req["id"] = json!(mid);
        }
    }
    let written = crate::ops::write::write_json(&req);
    let memory_id = written["id"].as_str().unwrap_or_default().to_string();
    // A thread labelled with a project (metadata "project") files its episodes under it: the
    // weekly roll-up gathers them into projects/<project>/summary.md. Without one, the run's
    // own label does ("project: hdrpop" in the user's words).
    let project = spi::one_opt::<String>(
        "SELECT metadata->>'project' FROM memory.threads WHERE user_id = $1 AND thread_id = $2",
        &[user.into(), thread.into()],
        "reading the thread's project",
    )
    .filter(|p| !p.trim().is_empty())
    .or_else(|| {
        let said: Vec<(&str, &str)> = rows.iter().map(|r| (r.1.as_str(), r.2.as_str())).collect();
        summary::project_label(&said)
    });
    let mut metadata: Value = json!({
        "kind": "episode", "thread_id": thread, "run_id": run, "from_seq": first_seq,
        "to_seq": last_seq, "memory_id": memory_id, "method": method,
    });
    if let Some(p) = project.filter(|p| !p.trim().is_empty()) {
        metadata["project"] = json!(p);
    }
    if pending {
        metadata["pending"] = json!("llm");
    }
    files::write(
        user,
        path,
        Some(&ep.title),
        &content,
        Some(ep.tags.clone()),
        Some(metadata),
    );
    let event = if update { "updated" } else { "created" };
    events::record(Event {
        thread: Some(thread),
        memory_id: Some(&memory_id),
        op: if update { "update" } else { "create" },
        ..Event::new(user, Node::Episodic, "create")
    });
    json!({
        "path": path, "memory_id": memory_id, "event": event, "from_seq": first_seq,
        "to_seq": last_seq, "messages": rows.len(), "method": method, "pending": pending,
        "content": content,
    })
}

/// The model's episode in place of the extractive one `episode_write` wrote (src/ops/refine.rs):
/// the same messages (the file's `from_seq`-`to_seq`), the same path, the same memory.
/// Conditional on the file's mark, under its row's lock; after REFINE_ATTEMPTS failed calls the
/// extractive episode stays.
pub fn refine(cfg: &memory_providers::llm::LlmConfig, user: &str, path: &str) -> Refined {
    let Some(mut meta) = spi::row(
        include_str!("../../sql/queries/refine_episode_read.sql"),
        &[user.into(), path.into()],
        "reading a pending episode",
        |r| {
            Ok(r.get::<crate::pg::json::JsonText>(1)?
                .map(|j| j.value())
                .unwrap_or(Value::Null))
        },
    ) else {
        return Refined::Gone;
    };
    let thread = meta["thread_id"].as_str().unwrap_or_default().to_string();
    let run = meta["run_id"].as_str().map(str::to_string);
    let (from, to) = (
        meta["from_seq"].as_i64().unwrap_or(1),
        meta["to_seq"].as_i64().unwrap_or(0),
    );
    let memory_id = meta["memory_id"].as_str().map(str::to_string);
    let rows: Vec<Row> = run_messages(user, &thread, from)
        .into_iter()
        .filter(|r| r.0 <= to)
        .collect();
    let settle = |meta: &Value| {
        spi::run(
            include_str!("../../sql/queries/refine_episode_write.sql"),
            &[user.into(), path.into(), pgrx::JsonB(meta.clone()).into()],
            "refining an episode",
        )
    };
    if rows.is_empty() {
        // Its messages are gone (erased): nothing to summarise again.
        if let Some(o) = meta.as_object_mut() {
            o.remove("pending");
        }
        settle(&meta);
        return Refined::Kept(None);
    }
    let (turns, date, refs) = run_text(&thread, run.as_deref(), &rows);
    // Written as any episode is (its text screened on the way): a write that raises (a policy
    // refusing the model's text) is a failed attempt, not an error that would roll its count back.
    let saved = llm_episode(cfg, &turns, &date, &refs).and_then(|ep| {
        crate::pg::subxact::catching(|| {
            save(
                user,
                &thread,
                run.as_deref(),
                &rows,
                (&ep, "llm", false),
                path,
                memory_id.as_deref(),
                true,
            )
        })
        .map_err(|e| e.to_string())
    });
    match saved {
        Ok(_) => {
            refine::event(user, Some(&thread), memory_id.as_deref(), true);
            Refined::Done
        }
        Err(e) => {
            let outcome = refine::failed(&mut meta, e);
            settle(&meta);
            refine::event(user, Some(&thread), memory_id.as_deref(), false);
            outcome
        }
    }
}

/// run_end: records that the thread's run ended (sql/queries/episodes_end.sql) and returns;
/// the worker does the rest ([`finish_run`]).
///
/// The queue is the worker's (sql/security.sql): the request is written as the extension's
/// owner, once the caller's own row security has found the thread theirs.
/// With an idempotency key, a repeat answers as the first call did and enqueues nothing; the key
/// is kept as the owner too (Citus refuses two users writing one tenant's shards in a
/// transaction, docs/citus.md).
pub fn end_run(
    thread: &str,
    run: Option<&str>,
    context_window: Option<i32>,
    key: Option<&Idempotency>,
) -> Value {
    let user = lookup::owner(Owned::Thread, thread);
    crate::pg::owner::as_owner(|| {
        idempotency::once(&user, "run_end", key, || {
            let at = spi::one_opt::<String>(
                include_str!("../../sql/queries/episodes_end.sql"),
                &[
                    user.as_str().into(),
                    thread.into(),
                    run.into(),
                    context_window.into(),
                ],
                "recording the end of a run",
            );
            json!({ "thread_id": thread, "run_id": run, "context_window": context_window, "requested_at": at })
        })
    })
}

/// Compaction after a run keeps this many of the newest messages in context.
const KEEP_AFTER_RUN: usize = 10;
/// docs/design.md "Episodes": compact once the context reaches 80% of the window.
const COMPACT_AT: &str = "0.8";

/// The worker's part of an ended run, in its transaction, with `user` as the session's tenant:
/// the episode (none when nothing happened since the last one), then compaction when the
/// context is over 80% of the window (run_end's, else memory_ext.context_window).
/// `{episode, compacted}`.
pub fn finish_run(user: &str, thread: &str, run: Option<&str>, window: Option<i32>) -> Value {
    let episode = write_for(user, thread, run, Llm::Now);
    let mut compacted = Value::Null;
    if let Some(w) = window.or_else(gucs::context_window) {
        let usage = crate::ops::recall::usage(thread, i64::from(w), None);
        if memory_core::tokens::needs_compaction(&usage, COMPACT_AT).unwrap_or(false) {
            compacted = crate::ops::compaction::compact(
                thread,
                crate::ops::compaction::Pick::KeepLast(KEEP_AFTER_RUN),
                None,
                Llm::Now,
            );
        }
    }
    json!({
        "episode": episode.as_ref().map(|e| e["path"].clone()),
        "compacted": compacted.get("summarized").cloned().unwrap_or(json!(0)),
    })
}

/// An ended run the worker has to finish: (user, thread, run_id, context_window, the
/// run_end request's time or `None` for a run ended by idleness).
pub type Due = (String, String, Option<String>, Option<i32>, Option<String>);

/// Ended runs due now and, when `idle_s` > 0, runs idle that long (sql/queries/episodes_due.sql).
pub fn due(limit: i64, idle_s: i64) -> Vec<Due> {
    spi::rows(
        include_str!("../../sql/queries/episodes_due.sql"),
        &[limit.into(), (idle_s as f64).into()],
        "listing ended runs",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
                r.get::<i32>(4)?,
                r.get::<String>(5)?,
            ))
        },
    )
}

/// Attempts at finishing an ended run before it is left with its error.
pub const MAX_END_ATTEMPTS: i32 = 5;

/// The run is finished: its run_end request goes (one that came meanwhile stays).
pub fn ended(user: &str, thread: &str, requested_at: &str) {
    spi::run(
        include_str!("../../sql/queries/episodes_ended.sql"),
        &[user.into(), thread.into(), requested_at.into()],
        "clearing an ended run",
    );
}

/// Finishing the run failed: retried after a backoff (1, 4, 16, 64 minutes,
/// sql/queries/episodes_end_failed.sql), at most [`MAX_END_ATTEMPTS`] times.
pub fn end_failed(user: &str, thread: &str, error: &str) {
    let backoff = 60.0;
    spi::run(
        include_str!("../../sql/queries/episodes_end_failed.sql"),
        &[
            user.into(),
            thread.into(),
            error.into(),
            backoff.into(),
            MAX_END_ATTEMPTS.into(),
        ],
        "recording a failed run end",
    );
}

/// Weekly project roll-ups (docs/design.md "Episodes"): for each project of `user` (all tenants
/// when `None`) whose summary is missing or a week old with episodes since (`now`: regardless of
/// the week), `projects/<project>/summary.md` lists the new episodes and keeps what earlier
/// roll-ups said. One project at a time, each in the caller's transaction.
/// Returns `[{user_id, project, path, episodes}]`.
pub fn rollup(user: Option<&str>, project: Option<&str>, now: bool) -> Vec<Value> {
    rollups_due(user, project, now)
        .into_iter()
        .map(rollup_one)
        .collect()
}

/// A project whose summary is due: (user, project, the last roll-up's end, the summary's path,
/// its content).
pub type RollupDue = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The projects whose summary is due (sql/queries/episodes_rollup_due.sql).
pub fn rollups_due(user: Option<&str>, project: Option<&str>, now: bool) -> Vec<RollupDue> {
    spi::rows(
        include_str!("../../sql/queries/episodes_rollup_due.sql"),
        &[user.into(), project.into(), now.into()],
        "finding projects to roll up",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
                r.get::<String>(4)?,
                r.get::<String>(5)?,
            ))
        },
    )
}

/// Writes one project's summary.
pub fn rollup_one(due: RollupDue) -> Value {
    let (user, project, since, path, previous) = due;
    let (user, project) = (user.as_str(), project.as_str());
    let rows: Vec<(String, String, String)> = spi::rows(
        include_str!("../../sql/queries/episodes_rollup_entries.sql"),
        &[user.into(), project.into(), since.clone().into()],
        "reading a project's episodes",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
            ))
        },
    );
    let entries: Vec<summary::RollupEntry> = rows
        .iter()
        .map(|(p, content, _)| summary::RollupEntry {
            date: summary::episode_field(content, "Date").unwrap_or_default(),
            title: summary::episode_title(content).unwrap_or_else(|| p.clone()),
            outcome: summary::episode_field(content, "Outcome").unwrap_or_default(),
            path: p.clone(),
        })
        .collect();
    let newest = rows.last().map(|r| r.2.clone()).or(since);
    // The day the summary is dated by and the instant it was rolled up, from one clock read.
    let (today, now) = spi::row(
        "SELECT to_char(current_date, 'YYYY-MM-DD'), to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
        &[],
        "reading the clock",
        |r| Ok((r.get::<String>(1)?.unwrap_or_default(), r.get::<String>(2)?)),
    )
    .unwrap_or_default();
    let content = summary::render_rollup(project, &today, &entries, previous.as_deref());
    let path = path.unwrap_or_else(|| {
        let slug = memory_core::detail::slug(project)
            .unwrap_or_else(|| "project".into())
            .replace('_', "-");
        format!("projects/{slug}/summary.md")
    });
    let metadata = json!({
        "kind": "project_summary", "project": project, "rolled_up_to": newest,
        "rolled_up_at": now,
        "episodes": entries.len(),
    });
    files::write(
        user,
        &path,
        Some(&format!("Project {project}: summary")),
        &content,
        Some(vec!["project".into(), "summary".into()]),
        Some(metadata),
    );
    events::record(Event::new(user, Node::Episodic, "rollup"));
    json!({ "user_id": user, "project": project, "path": path, "episodes": entries.len() })
}
