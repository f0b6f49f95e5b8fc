//! Summaries the worker keeps (docs/api.md "Summaries"): `memory_summary_define`,
//! `memory_summary_drop`, `memory_summaries`, `memory_summary_get`, `memory_summary_refresh`
//! (src/api/summaries.rs declares them) and the worker's `summaries` job (src/worker/jobs.rs).
//!
//! A summary is a question about a tenant's memories with a current answer. The answer is
//! written by the worker — with the LLM when one is configured and the tenant's daily token
//! budget allows, from the memories themselves otherwise (memory_core::summaries) — and read
//! with no model at query time. It goes stale when a memory it rests on is superseded, deleted
//! or changed (seen at read time, sql/queries/summaries_read.sql), or when the memories its scope
//! would give it change (the worker compares a fingerprint, [`check`]); the next version is
//! written then and not before. Every version is kept in memory.summary_versions.
//!
//! The tables are written as the extension's owner: a tenant reads its summaries but cannot
//! write an answer, a version or its budget (sql/security.sql).

use crate::error::raise;
use crate::error::OrRaise;
use crate::gucs;
use crate::ops::refine;
use crate::pg::events::{self, Event, Node};
use crate::pg::json::JsonText;
use crate::pg::{owner, spi, tenant};
use memory_core::summaries::{self as rules, Evidence};
use memory_core::SqlState;
use serde_json::{json, Value};

/// The tenant a summary call acts for: the session's, required (summaries have no `user_id`
/// argument: a session reads and defines its own).
fn current_tenant() -> String {
    tenant::resolve(None)
}

/// memory_summary_define: defines (or redefines) summary `name` of the current tenant.
/// Returns `{name, question, scope, created}`; the answer comes from the worker.
pub fn define(name: Option<&str>, question: Option<&str>, scope: Option<Value>) -> Value {
    let name = rules::name(name).or_raise();
    if rules::is_builtin(name) {
        raise(
            SqlState::InvalidParameterValue,
            format!("\"{}\" is a built-in summary's name", memory_core::names::shown(name)),
            Some("built-in summaries (profile, entity:…, project:…) are defined by the worker; pick another name".into()),
        );
    }
    let question = rules::question(question).or_raise();
    let scope = rules::parse_scope(&scope.unwrap_or_else(|| json!({})))
        .or_raise()
        .to_json();
    let user = current_tenant();
    // Everything written as the owner, screening's record too: Citus refuses a transaction in
    // which two users touch one tenant's shards (docs/citus.md).
    let (question, created) = owner::as_owner(|| {
        let question = crate::ops::screen::text("question", Some(&user), question);
        let created = spi::one_opt::<bool>(
            include_str!("../../sql/queries/summaries_define.sql"),
            &[
                user.as_str().into(),
                name.into(),
                question.as_str().into(),
                pgrx::JsonB(scope.clone()).into(),
            ],
            "defining a summary",
        );
        (question, created)
    });
    json!({"name": name, "question": question, "scope": scope, "created": created == Some(true)})
}

/// memory_summary_drop: a tenant's own summary goes with its versions; a built-in one is
/// disabled (the worker does not define it again) and loses its answer and versions. Whether
/// there was one.
pub fn drop(name: Option<&str>) -> bool {
    let name = rules::name(name).or_raise();
    let user = current_tenant();
    owner::as_owner(|| {
        let own = spi::one_opt::<bool>(
            "DELETE FROM memory.summaries WHERE user_id = $1 AND name = $2 AND NOT builtin RETURNING true",
            &[user.as_str().into(), name.into()],
            "dropping a summary",
        );
        if own.is_some() {
            return true;
        }
        let builtin = spi::one_opt::<bool>(
            "UPDATE memory.summaries SET disabled = true, answer = NULL, evidence = '{}', fingerprint = NULL, \
                    stale = true, last_error = NULL, updated_at = now() \
             WHERE user_id = $1 AND name = $2 AND builtin AND NOT disabled RETURNING true",
            &[user.as_str().into(), name.into()],
            "dropping a built-in summary",
        );
        spi::run(
            "DELETE FROM memory.summary_versions WHERE user_id = $1 AND name = $2",
            &[user.as_str().into(), name.into()],
            "dropping a summary's versions",
        );
        builtin.is_some()
    })
}

/// memory_summary_get: summary `name` (its current answer, or version `version`); P0002 when
/// there is no such summary or version.
pub fn get(name: Option<&str>, version: Option<i32>) -> JsonText {
    let name = rules::name(name).or_raise();
    let user = current_tenant();
    let found = match version {
        None => spi::one_opt::<String>(
            include_str!("../../sql/queries/summaries_read.sql"),
            &[user.as_str().into(), name.into()],
            "reading a summary",
        ),
        Some(v) => spi::one_opt::<String>(
            include_str!("../../sql/queries/summaries_version.sql"),
            &[user.as_str().into(), name.into(), v.into()],
            "reading a summary's version",
        ),
    };
    match found {
        Some(j) => JsonText(j),
        None => raise(
            SqlState::NoDataFound,
            match version {
                None => format!("no summary \"{}\"", memory_core::names::shown(name)),
                Some(v) => format!(
                    "summary \"{}\" has no version {v}",
                    memory_core::names::shown(name)
                ),
            },
            Some("memory_summaries() lists the tenant's summaries".into()),
        ),
    }
}

/// memory_summaries: every summary of the current tenant, by name, as memory_summary_get shows it.
pub fn list() -> JsonText {
    let user = current_tenant();
    let rows = spi::rows(
        include_str!("../../sql/queries/summaries_read.sql"),
        &[user.as_str().into(), Option::<&str>::None.into()],
        "listing summaries",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    );
    JsonText(format!("[{}]", rows.join(",")))
}

/// The current answers of summaries `names` of `user` (all of them when `names` is None), in the
/// order given: (name, question, answer, the day it was written, stale). With `allowed` (an
/// agent's category allowlist) only summaries whose every memory is of an allowed category: an
/// answer repeats what it rests on, and an agent must not read through a summary what it may not
/// read as a memory. Summaries with no answer yet are left out.
pub fn readable(
    user: &str,
    names: Option<&[String]>,
    allowed: Option<&[String]>,
) -> Vec<(String, String, String, String, bool)> {
    let rows = spi::rows(
        include_str!("../../sql/queries/summaries_readable.sql"),
        &[
            user.into(),
            names.map(<[String]>::to_vec).into(),
            allowed.map(<[String]>::to_vec).into(),
        ],
        "reading summaries",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
                r.get::<String>(4)?.unwrap_or_default(),
                r.get::<bool>(5)?.unwrap_or(true),
            ))
        },
    );
    match names {
        None => rows,
        Some(ns) => ns
            .iter()
            .filter_map(|n| rows.iter().find(|r| &r.0 == n).cloned())
            .collect(),
    }
}

/// Defines the built-in summaries that are due (sql/queries/summaries_builtin.sql) for `user`
/// (None: every tenant); how many. Off with `memory_ext.summary_builtin`.
pub fn discover(user: Option<&str>) -> i64 {
    if !gucs::summary_builtin() {
        return 0;
    }
    let found: Vec<(String, String, Option<String>)> = spi::rows(
        include_str!("../../sql/queries/summaries_builtin.sql"),
        &[user.into(), gucs::summary_entity_min().into()],
        "finding built-in summaries",
        |r| {
            Ok((
                r.get(1)?.unwrap_or_default(),
                r.get(2)?.unwrap_or_default(),
                r.get(3)?,
            ))
        },
    );
    let mut n = 0;
    for (kind, user, subject) in found {
        let (name, question, scope) = match (kind.as_str(), subject) {
            ("profile", _) => {
                let (q, s) = rules::profile();
                (rules::PROFILE.to_string(), q, s)
            }
            ("entity", Some(e)) => rules::entity(&e),
            ("project", Some(p)) => rules::project(&p),
            _ => continue,
        };
        spi::run(
            "INSERT INTO memory.summaries (user_id, name, question, scope, builtin) VALUES ($1, $2, $3, $4, true) \
             ON CONFLICT (user_id, name) DO NOTHING",
            &[user.as_str().into(), name.as_str().into(), question.as_str().into(), pgrx::JsonB(scope).into()],
            "defining a built-in summary",
        );
        n += 1;
    }
    n
}

/// Fresh summaries whose tenant changed a memory since they were compared (or whose evidence
/// went), up to `limit`: (tenant, name).
pub fn changed(limit: i64) -> Vec<(String, String)> {
    pairs(
        include_str!("../../sql/queries/summaries_changed.sql"),
        limit,
        "finding summaries to compare",
    )
}

/// Stale summaries due for a new version, up to `limit`: (tenant, name).
pub fn due(limit: i64) -> Vec<(String, String)> {
    pairs(
        include_str!("../../sql/queries/summaries_due.sql"),
        limit,
        "finding stale summaries",
    )
}

fn pairs(query: &str, limit: i64, what: &str) -> Vec<(String, String)> {
    spi::rows(query, &[limit.into()], what, |r| {
        Ok((r.get(1)?.unwrap_or_default(), r.get(2)?.unwrap_or_default()))
    })
}

/// A summary's definition and state, locked for the rest of the transaction.
struct Row {
    question: String,
    scope: Value,
    fingerprint: Option<String>,
    stale: bool,
    attempts: i32,
}

fn lock(user: &str, name: &str) -> Option<Row> {
    // The row locked by a plain keyed statement (Citus routes FOR UPDATE only so), then whether
    // its evidence changed as sql/queries/summaries_read.sql reads it.
    let mut row = spi::row(
        "SELECT question, scope::text, fingerprint, stale, attempts \
         FROM memory.summaries WHERE user_id = $1 AND name = $2 AND NOT disabled FOR UPDATE",
        &[user.into(), name.into()],
        "locking a summary",
        |r| {
            Ok(Row {
                question: r.get(1)?.unwrap_or_default(),
                scope: r
                    .get::<String>(2)?
                    .and_then(|s| serde_json::from_str(&s).ok())
                    .unwrap_or(Value::Null),
                fingerprint: r.get(3)?,
                stale: r.get(4)?.unwrap_or(true),
                attempts: r.get(5)?.unwrap_or(0),
            })
        },
    )?;
    if !row.stale {
        row.stale = spi::one_opt::<String>(
            include_str!("../../sql/queries/summaries_read.sql"),
            &[user.into(), name.into()],
            "reading a summary",
        )
        .and_then(|j| serde_json::from_str::<Value>(&j).ok())
        .is_none_or(|v| v["stale"] == true);
    }
    Some(row)
}

/// The memories a summary may rest on now, the best first: (id, evidence, updated_at).
fn candidates(user: &str, question: &str, scope: &rules::Scope) -> Vec<(String, Evidence, String)> {
    let v = crate::embed::query_vector(question, "summary evidence");
    let (vector, model) = match &v {
        Some((m, v)) => (Some(crate::embed::vector_text(v)), Some(m.id.clone())),
        None => (None, None),
    };
    spi::rows(
        include_str!("../../sql/queries/summaries_evidence.sql"),
        &[
            user.into(),
            scope.categories.clone().into(),
            scope.kinds.clone().into(),
            scope.tags.clone().into(),
            scope.entity.as_deref().into(),
            scope.project.as_deref().into(),
            vector.into(),
            model.into(),
            (scope.limit as i64).into(),
            scope.actor.as_deref().into(),
        ],
        "reading a summary's memories",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                Evidence {
                    text: r.get(2)?.unwrap_or_default(),
                    day: r.get(3)?.unwrap_or_default(),
                },
                r.get::<String>(4)?.unwrap_or_default(),
            ))
        },
    )
}

/// What the memories a summary may rest on are (memory_core::summaries::fingerprint).
fn fingerprint(found: &[(String, Evidence, String)]) -> String {
    rules::fingerprint(
        found
            .iter()
            .map(|(id, _, at)| format!("{id}@{at}"))
            .collect(),
    )
}

/// Compares fresh summary `name` with what its scope gives now, in the caller's transaction;
/// marks it stale when that changed. Whether it is stale now.
pub fn check(user: &str, name: &str) -> bool {
    let Some(row) = lock(user, name) else {
        return false;
    };
    let stale = row.stale || {
        let scope = rules::parse_scope(&row.scope).unwrap_or_default();
        let found = candidates(user, &row.question, &scope);
        row.fingerprint.as_deref() != Some(fingerprint(&found).as_str())
    };
    // (Two statements: Citus refuses now() inside CASE.)
    if stale {
        spi::run(
            "UPDATE memory.summaries SET stale = true, stale_since = now() \
             WHERE user_id = $1 AND name = $2 AND NOT stale",
            &[user.into(), name.into()],
            "marking a summary stale",
        );
    }
    spi::run(
        "UPDATE memory.summaries SET checked_at = now() WHERE user_id = $1 AND name = $2",
        &[user.into(), name.into()],
        "recording a summary's comparison",
    );
    stale
}

/// What became of one summary the worker (or memory_summary_refresh) took.
#[derive(Debug, Clone, PartialEq)]
pub enum Refreshed {
    /// A new version is written (its method).
    Written(&'static str),
    /// It was current: nothing written.
    Current,
    /// The model failed; it stays stale until its retry time (the error).
    Retry(String),
    /// The tenant's token budget for today is spent: it stays stale until tomorrow.
    Budget,
    /// No such summary (dropped, erased, disabled).
    Gone,
}

/// Tokens one tenant's summaries used today.
fn tokens_today(user: &str) -> i64 {
    spi::one_opt::<i64>(
        "SELECT (tokens_in + tokens_out)::bigint FROM memory.summary_usage WHERE user_id = $1 AND day = current_date",
        &[user.into()],
        "reading the summaries' token use",
    )
    .unwrap_or(0)
}

/// Writes a new version of summary `name` of `user` when it is stale (or `force`), in the
/// caller's transaction as the extension's owner, the tenant set. With an LLM configured and
/// the tenant's budget left, the model writes the answer; a model that fails is tried again
/// later (at most refine::REFINE_ATTEMPTS times, then the answer without it is written); an
/// answer that is not the JSON asked for gets the answer without the model at once.
pub fn refresh(user: &str, name: &str, force: bool) -> Refreshed {
    owner::as_owner(|| refresh_owned(user, name, force))
}

fn refresh_owned(user: &str, name: &str, force: bool) -> Refreshed {
    let Some(row) = lock(user, name) else {
        return Refreshed::Gone;
    };
    let scope = rules::parse_scope(&row.scope).unwrap_or_default();
    let found = candidates(user, &row.question, &scope);
    let print = fingerprint(&found);
    if !row.stale && !force && row.fingerprint.as_deref() == Some(print.as_str()) {
        spi::run(
            "UPDATE memory.summaries SET checked_at = now() WHERE user_id = $1 AND name = $2",
            &[user.into(), name.into()],
            "recording a summary's comparison",
        );
        return Refreshed::Current;
    }
    let budget = gucs::summary_daily_tokens();
    let llm = gucs::llm().filter(|_| budget > 0 && !found.is_empty());
    if llm.is_some() && tokens_today(user) >= budget {
        // Spent for today: it stays stale (and marked so) until tomorrow's budget.
        spi::run(
            "UPDATE memory.summaries SET stale_since = now() \
             WHERE user_id = $1 AND name = $2 AND stale_since IS NULL",
            &[user.into(), name.into()],
            "marking a summary stale",
        );
        spi::run(
            "UPDATE memory.summaries SET stale = true, \
                    retry_at = date_trunc('day', now()) + interval '1 day', \
                    last_error = 'the tenant''s summary tokens for today are spent' \
             WHERE user_id = $1 AND name = $2",
            &[user.into(), name.into()],
            "deferring a summary",
        );
        event(user, "skipped");
        return Refreshed::Budget;
    }
    let evidence: Vec<Evidence> = found.iter().map(|(_, e, _)| e.clone()).collect();
    // Oldest first in the prompt (memory_core::summaries::prompt_input says why); the ranking's
    // order for the answer without a model.
    let mut by_day: Vec<usize> = (0..evidence.len()).collect();
    by_day.sort_by(|&a, &b| evidence[a].day.cmp(&evidence[b].day));
    let mut tokens = (0i64, 0i64);
    let mut failure: Option<String> = None;
    let mut answer: Option<(rules::Answer, &'static str)> = None;
    if let Some(cfg) = llm {
        let shown: Vec<Evidence> = by_day.iter().map(|&i| evidence[i].clone()).collect();
        let input = rules::prompt_input(&row.question, &shown);
        match memory_providers::llm::chat_full(
            &cfg,
            rules::PROMPT,
            &input,
            true,
            Some(rules::ANSWER_MAX_TOKENS),
        ) {
            Ok(a) => {
                let enc = gucs::token_encoding();
                tokens = (
                    a.tokens_in
                        .map(|t| t as i64)
                        .unwrap_or_else(|| (enc.count(rules::PROMPT) + enc.count(&input)) as i64),
                    a.tokens_out
                        .map(|t| t as i64)
                        .unwrap_or_else(|| enc.count(&a.text) as i64),
                );
                // Held to the memories shown (memory_core::summaries::grounded): a looping or
                // invented answer keeps what rests on them, or is not used at all.
                match rules::parse_answer(&a.text, shown.len())
                    .and_then(|p| rules::grounded(&p, &shown).map(|(p, _)| p))
                {
                    Ok(mut parsed) => {
                        parsed.used = parsed.used.iter().map(|&k| by_day[k]).collect();
                        parsed.used.sort_unstable();
                        match refine::screened("summary", user, &parsed.text) {
                            Ok(t) => {
                                parsed.text = t;
                                answer = Some((parsed, "llm"));
                            }
                            Err(e) => failure = Some(e),
                        }
                    }
                    // Not the answer asked for: asking again would most likely get the same.
                    Err(e) => failure = Some(format!("the model's answer was unusable: {e}")),
                }
            }
            Err(e) => {
                let n = row.attempts + 1;
                if (n as i64) < refine::REFINE_ATTEMPTS {
                    let e = e.to_string();
                    spi::run(
                        "UPDATE memory.summaries SET attempts = $3, last_error = $4, \
                                retry_at = now() + make_interval(secs => 60 * power(2, $3 - 1)) \
                         WHERE user_id = $1 AND name = $2",
                        &[user.into(), name.into(), n.into(), e.as_str().into()],
                        "recording a summary's failed attempt",
                    );
                    event(user, "error");
                    return Refreshed::Retry(e);
                }
                failure = Some(e.to_string());
            }
        }
        record_usage(user, tokens);
    }
    let (answer, method) = match answer {
        Some(a) => a,
        None => match rules::extractive(&evidence) {
            Some(a) => (a, "extractive"),
            // Nothing in scope: no answer yet, and nothing to keep a version of.
            None => {
                spi::run(
                    "UPDATE memory.summaries SET answer = NULL, evidence = '{}', fingerprint = $3, stale = false, \
                            stale_since = NULL, refreshed_at = now(), checked_at = now(), attempts = 0, \
                            retry_at = NULL, last_error = NULL, updated_at = now() \
                     WHERE user_id = $1 AND name = $2",
                    &[user.into(), name.into(), print.as_str().into()],
                    "writing an empty summary",
                );
                return Refreshed::Current;
            }
        },
    };
    let ids: Vec<String> = answer.used.iter().map(|&i| found[i].0.clone()).collect();
    spi::run(
        "WITH s AS ( \
             UPDATE memory.summaries SET answer = $3, evidence = $4::uuid[], fingerprint = $5, method = $6, \
                    version = version + 1, stale = false, stale_since = NULL, refreshed_at = now(), \
                    checked_at = now(), attempts = 0, retry_at = NULL, last_error = $7, updated_at = now() \
              WHERE user_id = $1 AND name = $2 RETURNING version, question) \
         INSERT INTO memory.summary_versions (user_id, name, version, question, answer, evidence, method, tokens_in, tokens_out) \
         SELECT $1, $2, s.version, s.question, $3, $4::uuid[], $6, $8, $9 FROM s",
        &[
            user.into(),
            name.into(),
            answer.text.as_str().into(),
            ids.into(),
            print.as_str().into(),
            method.into(),
            failure.as_deref().into(),
            (tokens.0.min(i32::MAX as i64) as i32).into(),
            (tokens.1.min(i32::MAX as i64) as i32).into(),
        ],
        "writing a summary's version",
    );
    event(user, if failure.is_some() { "error" } else { "ok" });
    Refreshed::Written(method)
}

fn record_usage(user: &str, (tin, tout): (i64, i64)) {
    spi::run(
        "INSERT INTO memory.summary_usage AS u (user_id, day, calls, tokens_in, tokens_out) \
         VALUES ($1, current_date, 1, $2, $3) \
         ON CONFLICT (user_id, day) DO UPDATE SET calls = u.calls + 1, \
             tokens_in = u.tokens_in + EXCLUDED.tokens_in, tokens_out = u.tokens_out + EXCLUDED.tokens_out",
        &[user.into(), tin.into(), tout.into()],
        "recording the summaries' token use",
    );
}

fn event(user: &str, status: &str) {
    events::record(Event {
        status,
        ..Event::new(user, Node::Worker, "summary")
    });
}

/// memory_summary_refresh: a new version of summary `name` (None: of every stale summary of
/// the tenant, the built-in ones defined first) now, as the worker would write it; with the LLM
/// when configured (this call may wait for it, as memory_extract does). Returns
/// `{refreshed: [names], current: [names], waiting: [{name, reason}]}`.
pub fn refresh_now(name: Option<&str>) -> Value {
    let user = current_tenant();
    let name = name.map(|n| rules::name(Some(n)).or_raise().to_string());
    // All of it as the owner (as memory_extract runs): Citus refuses a transaction in which two
    // users touch one tenant's shards.
    owner::as_owner(|| refresh_owned_all(&user, name.as_deref()))
}

fn refresh_owned_all(user: &str, name: Option<&str>) -> Value {
    let names: Vec<String> = match name {
        Some(n) => {
            let n = n.to_string();
            let known = spi::one_opt::<bool>(
                "SELECT true FROM memory.summaries WHERE user_id = $1 AND name = $2 AND NOT disabled",
                &[user.into(), n.as_str().into()],
                "finding a summary",
            );
            if known.is_none() {
                raise(
                    SqlState::NoDataFound,
                    format!("no summary \"{}\"", memory_core::names::shown(&n)),
                    Some("memory_summaries() lists the tenant's summaries".into()),
                );
            }
            vec![n]
        }
        None => {
            discover(Some(user));
            spi::rows(
                "SELECT name FROM memory.summaries WHERE user_id = $1 AND NOT disabled ORDER BY name",
                &[user.into()],
                "listing summaries",
                |r| r.get::<String>(1).map(Option::unwrap_or_default),
            )
        }
    };
    let (mut refreshed, mut current, mut waiting) = (vec![], vec![], vec![]);
    for n in names {
        match refresh_owned(user, &n, name.is_some()) {
            Refreshed::Written(_) => refreshed.push(json!(n)),
            Refreshed::Current | Refreshed::Gone => current.push(json!(n)),
            Refreshed::Retry(e) => waiting.push(json!({"name": n, "reason": e})),
            Refreshed::Budget => waiting.push(
                json!({"name": n, "reason": "the tenant's summary tokens for today are spent"}),
            ),
        }
    }
    json!({"refreshed": refreshed, "current": current, "waiting": waiting})
}
