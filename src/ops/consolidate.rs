//! memory_consolidate (docs/api.md "Lifecycle", docs/design.md "Consolidation"): the daily pass that merges memories
//! stating one fact twice and links the rest of the near pairs. The decisions that need no
//! database are in `memory_core::consolidate`; this module gathers pairs, asks the LLM (or
//! applies the rule), and writes merges, links, fingerprints and usage.
//!
//! Everything a run writes for a tenant is in the caller's transaction: a run stopped half-way
//! (error, cancel, server stop) leaves no half-merged pair. The worker runs one transaction per
//! tenant, so one tenant's failure does not undo another's.

use crate::embed;
use crate::error::OrRaise;
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::owner::as_owner;
use crate::pg::{hints, spi, tenant, vector};
use memory_core::consolidate::{self as rules, Side};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// Candidates per tenant per run (newest first); each brings its 5 nearest neighbours.
const POOL: i64 = 500;

#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    pub pairs_checked: i64,
    pub merged: i64,
    pub linked: i64,
    pub skipped_fingerprinted: i64,
    pub llm_calls: i64,
    pub errors: i64,
    /// Pending proposals applied because the LLM read another one as the same in other words.
    pub corroborated: i64,
}

impl Counts {
    pub fn add(&mut self, o: Counts) {
        self.pairs_checked += o.pairs_checked;
        self.merged += o.merged;
        self.linked += o.linked;
        self.skipped_fingerprinted += o.skipped_fingerprinted;
        self.llm_calls += o.llm_calls;
        self.errors += o.errors;
        self.corroborated += o.corroborated;
    }

    pub fn json(&self) -> Value {
        json!({
            "pairs_checked": self.pairs_checked, "merged": self.merged, "linked": self.linked,
            "skipped_fingerprinted": self.skipped_fingerprinted, "llm_calls": self.llm_calls,
            "errors": self.errors, "corroborated": self.corroborated,
        })
    }
}

struct Item {
    text: String,
    side: Side,
}

#[derive(Clone)]
struct Pair {
    a: String,
    b: String,
    score: f64,
}

/// The tenants a call covers: the one named, else the current one, else every tenant with
/// memories that the caller may see.
pub fn tenants(user_id: Option<&str>) -> Vec<String> {
    if user_id.is_some() || tenant::acting().is_some() {
        return vec![tenant::resolve(user_id)];
    }
    spi::rows(
        "SELECT user_id FROM memory.corpus WHERE docs > 0 ORDER BY user_id",
        &[],
        "listing tenants",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    )
}

/// This run's candidates and their near pairs (each unordered pair once, best score first).
fn near_pairs(user: &str, model: &embed::ActiveModel) -> (Vec<String>, Vec<Pair>) {
    let dims = model.dims.unwrap_or(0);
    // The band is on the reference scale (memory_core::cosine); SQL compares the model's own
    // cosines, and the pairs' scores come back on the reference scale.
    let scale = embed::scale_of(&model.id);
    let sql = include_str!("../../sql/queries/consolidate_pairs.sql")
        .replace("{model}", &vector::literal(&model.id))
        .replace("{vt}", &vector::ty_of(&model.id, dims))
        .replace("{op}", &vector::cosine_op());
    let rows: Vec<(String, Option<String>, f64)> = vector::with_iterative_scan(|| {
        spi::rows(
            &sql,
            &[
                user.into(),
                POOL.into(),
                scale.from_reference(gucs::link_threshold()).into(),
                scale.from_reference(gucs::merge_threshold()).into(),
            ],
            "finding near pairs",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?,
                    scale.to_reference(r.get::<f64>(3)?.unwrap_or(0.0)),
                ))
            },
        )
    });
    let mut distinct = HashSet::new();
    let candidates: Vec<String> = rows
        .iter()
        .filter(|(x, _, _)| distinct.insert(x.clone()))
        .map(|(x, _, _)| x.clone())
        .collect();
    // Each unordered pair once, best score first.
    let mut seen = HashSet::new();
    let mut pairs: Vec<Pair> = rows
        .into_iter()
        .filter_map(|(x, y, score)| {
            let y = y?;
            let (a, b) = if x < y { (x, y) } else { (y, x) };
            seen.insert((a.clone(), b.clone()))
                .then_some(Pair { a, b, score })
        })
        .collect();
    pairs.sort_by(|p, q| q.score.total_cmp(&p.score));
    (candidates, pairs)
}

/// Marks `ids` examined (memory.consolidation_seen), so that the next runs take other
/// candidates first.
fn mark_examined(user: &str, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    as_owner(|| {
        spi::run(
            include_str!("../../sql/queries/consolidate_seen.sql"),
            &[user.into(), ids.to_vec().into()],
            "marking candidates examined",
        )
    });
}

fn items(user: &str, ids: &[String]) -> BTreeMap<String, Item> {
    spi::rows(
        include_str!("../../sql/queries/consolidate_items.sql"),
        &[user.into(), ids.to_vec().into()],
        "reading pair texts",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                Item {
                    text: r.get::<String>(2)?.unwrap_or_default(),
                    side: Side {
                        pinned: r.get::<bool>(3)?.unwrap_or(false),
                        importance: r.get::<i16>(4)?.unwrap_or(2),
                        updated: r.get::<f64>(5)?.unwrap_or(0.0),
                        access_count: r.get::<i64>(6)?.unwrap_or(0),
                    },
                },
            ))
        },
    )
    .into_iter()
    .collect()
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The pairs among `pairs` checked within FINGERPRINT_DAYS at the same rounded score, in one
/// query.
fn fingerprinted(user: &str, pairs: &[Pair]) -> HashSet<(String, String)> {
    let a: Vec<String> = pairs.iter().map(|p| p.a.clone()).collect();
    let b: Vec<String> = pairs.iter().map(|p| p.b.clone()).collect();
    let score: Vec<f64> = pairs.iter().map(|p| round2(p.score)).collect();
    spi::rows(
        include_str!("../../sql/queries/consolidate_fingerprinted.sql"),
        &[
            user.into(),
            a.into(),
            b.into(),
            score.into(),
            rules::FINGERPRINT_DAYS.into(),
        ],
        "reading fingerprints",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
            ))
        },
    )
    .into_iter()
    .collect()
}

fn usage(user: &str) -> (i64, i64) {
    spi::row(
        "SELECT pairs::bigint, llm_calls::bigint FROM memory.consolidation_usage WHERE user_id = $1 AND day = current_date",
        &[user.into()],
        "reading consolidation usage",
        |row| Ok((row.get::<i64>(1)?.unwrap_or(0), row.get::<i64>(2)?.unwrap_or(0))),
    )
    .unwrap_or((0, 0))
}

/// The system and user messages of one batched check of pairs.
type Prompt = fn(&[(&str, &str)]) -> (String, String);

/// Verdicts for `pairs` from the LLM, batched, asked with `prompt` (`what` names the check in
/// a warning); `None` where it gave none (error, skipped, invalid, or the day's prompt cap
/// reached): those pairs wait for the next run.
fn ask_llm(
    cfg: &memory_providers::llm::LlmConfig,
    prompt: Prompt,
    what: &str,
    texts: &[(&str, &str)],
    calls_left: &mut i64,
    c: &mut Counts,
) -> Vec<Option<bool>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(rules::LLM_BATCH) {
        // A cancel, statement_timeout or worker shutdown takes effect between prompts (each
        // bounded by memory_ext.http_timeout_ms), rolling the whole run back.
        pgrx::check_for_interrupts!();
        if *calls_left <= 0 {
            out.extend(std::iter::repeat_n(None, chunk.len()));
            continue;
        }
        *calls_left -= 1;
        c.llm_calls += 1;
        let (system, user) = prompt(chunk);
        // A verdict is a few tokens: a model that rambles is cut, not waited for.
        let cap = 64 + 32 * chunk.len() as u32;
        let verdicts = memory_providers::llm::chat_full(cfg, &system, &user, true, Some(cap))
            .map_err(|e| e.to_string())
            .and_then(|a| rules::parse_llm_answer(&a.text, chunk.len()));
        match verdicts {
            Ok(v) => {
                c.errors += v.iter().filter(|x| x.is_none()).count() as i64;
                out.extend(v);
            }
            Err(e) => {
                pgrx::warning!("memory_consolidate: {what} check failed: {e}");
                c.errors += 1;
                out.extend(std::iter::repeat_n(None, chunk.len()));
            }
        }
    }
    out
}

/// One tenant's run.
pub fn consolidate_tenant(user: &str, max_pairs: i64) -> Counts {
    let mut c = Counts::default();
    let model = embed::active_model().or_raise();
    let (pairs_today, calls_today) = usage(user);
    let mut budget = max_pairs - pairs_today;
    if budget <= 0 {
        return c;
    }
    let (candidates, pairs) = near_pairs(user, &model);
    // Memories with a pair left undecided (over the day's budget, or no verdict) are not marked
    // examined: the next run takes them first.
    let mut undecided: HashSet<String> = HashSet::new();
    let ids: Vec<String> = pairs
        .iter()
        .flat_map(|p| [p.a.clone(), p.b.clone()])
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let items = items(user, &ids);
    let (link, merge) = (gucs::link_threshold(), gucs::merge_threshold());
    let checked = fingerprinted(user, &pairs);
    let mut todo: Vec<&Pair> = vec![];
    for p in &pairs {
        let (Some(a), Some(b)) = (items.get(&p.a), items.get(&p.b)) else {
            continue;
        };
        if !rules::worth_checking(&a.text, &b.text, p.score, link, merge) {
            continue;
        }
        if checked.contains(&(p.a.clone(), p.b.clone())) {
            c.skipped_fingerprinted += 1;
            continue;
        }
        if budget == 0 {
            undecided.insert(p.a.clone());
            undecided.insert(p.b.clone());
            continue;
        }
        budget -= 1;
        todo.push(p);
    }
    let texts: Vec<(&str, &str)> = todo
        .iter()
        .map(|p| (items[&p.a].text.as_str(), items[&p.b].text.as_str()))
        .collect();
    let verdicts: Vec<Option<bool>> = match gucs::llm() {
        Some(cfg) => {
            let mut left = gucs::consolidation_max_llm_calls() as i64 - calls_today;
            let v = ask_llm(
                &cfg,
                rules::llm_prompt,
                "same-fact",
                &texts,
                &mut left,
                &mut c,
            );
            paraphrases(user, &cfg, &mut left, &mut c);
            v
        }
        None => todo
            .iter()
            .zip(&texts)
            .map(|(p, (a, b))| Some(rules::rule_same_fact(a, b, p.score)))
            .collect(),
    };
    let mut gone: HashSet<String> = HashSet::new();
    for (p, v) in todo.iter().zip(verdicts) {
        let Some(same) = v else {
            undecided.insert(p.a.clone());
            undecided.insert(p.b.clone());
            continue;
        };
        // A memory merged away earlier in this run takes no further part.
        if gone.contains(&p.a) || gone.contains(&p.b) {
            continue;
        }
        c.pairs_checked += 1;
        if same {
            let (keep, lose) = if rules::a_survives(&items[&p.a].side, &items[&p.b].side) {
                (&p.a, &p.b)
            } else {
                (&p.b, &p.a)
            };
            if merge_pair(user, keep, lose, p.score) {
                c.merged += 1;
                gone.insert(lose.clone());
                events::record(Event {
                    memory_id: Some(keep),
                    sim: Some(p.score as f32),
                    ..Event::new(user, Node::Worker, "merge")
                });
            }
        } else if link_pair(user, &p.a, &p.b, p.score) {
            c.linked += 1;
            events::record(Event {
                memory_id: Some(&p.a),
                sim: Some(p.score as f32),
                ..Event::new(user, Node::Worker, "link")
            });
        }
        fingerprint(user, p, same);
    }
    let examined: Vec<String> = candidates
        .into_iter()
        .filter(|id| !undecided.contains(id))
        .collect();
    mark_examined(user, &examined);
    // The budget bookkeeping is the operator's, not the tenant's (src/pg/owner.rs).
    as_owner(|| {
        spi::run(
            include_str!("../../sql/queries/consolidate_usage.sql"),
            &[
                user.into(),
                (c.pairs_checked as i32).into(),
                (c.llm_calls as i32).into(),
            ],
            "recording consolidation usage",
        )
    });
    c
}

/// Pairs of pending proposals one paraphrase check takes at most per tenant and run.
const PARAPHRASE_PAIRS: usize = 20;

/// Pending corroborate proposals of one field that say the same in other words, as the LLM
/// reads them (memory_core::consent::paraphrase_prompt): the word rules at write time
/// (src/ops/consent.rs) let only added qualifiers and frames through, so "Mia's dream is to run
/// a marathon" and "Mia hopes to finish a marathon" wait there. The older proposal is applied
/// through memory_approve's path, recorded as corroborated by the newer, which is applied as
/// the same memory. Each pair is asked once (a fingerprint at score 0); the day's LLM calls
/// bound it with consolidation's.
fn paraphrases(
    user: &str,
    cfg: &memory_providers::llm::LlmConfig,
    calls_left: &mut i64,
    c: &mut Counts,
) {
    let pending: Vec<(String, String, String)> = as_owner(|| {
        spi::rows(
            include_str!("../../sql/queries/consolidate_pending_proposals.sql"),
            &[user.into()],
            "reading pending proposals",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?.unwrap_or_default(),
                    r.get::<String>(3)?.unwrap_or_default(),
                ))
            },
        )
    });
    // (older, newer) by their place in `pending` (oldest first), with the pair as fingerprints
    // name it (ids in order).
    let mut pairs: Vec<(usize, usize, Pair)> = vec![];
    for i in 0..pending.len() {
        for j in i + 1..pending.len() {
            if pending[i].1 == pending[j].1 && pairs.len() < PARAPHRASE_PAIRS {
                let (a, b) = (&pending[i].0, &pending[j].0);
                let (a, b) = if a < b { (a, b) } else { (b, a) };
                let p = Pair {
                    a: a.clone(),
                    b: b.clone(),
                    score: 0.0,
                };
                pairs.push((i, j, p));
            }
        }
    }
    let all: Vec<Pair> = pairs.iter().map(|(_, _, p)| p.clone()).collect();
    let checked = fingerprinted(user, &all);
    pairs.retain(|(_, _, p)| !checked.contains(&(p.a.clone(), p.b.clone())));
    if pairs.is_empty() {
        return;
    }
    let texts: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(i, j, _)| (pending[*i].2.as_str(), pending[*j].2.as_str()))
        .collect();
    let verdicts = ask_llm(
        cfg,
        memory_core::consent::paraphrase_prompt,
        "paraphrase",
        &texts,
        calls_left,
        c,
    );
    let mut done: HashSet<usize> = HashSet::new();
    for ((i, j, p), v) in pairs.iter().zip(verdicts) {
        let Some(same) = v else { continue };
        if same && !done.contains(i) && !done.contains(j) {
            // The older one is the change proposed first; the newer corroborates it.
            let (first, second) = (&pending[*i].0, &pending[*j].0);
            // In a subtransaction: a proposal that can no longer be written (a memory it
            // supersedes changed meanwhile, screening) is left pending, the run goes on.
            let applied = crate::pg::subxact::catching(|| {
                let written = crate::ops::write::approve(
                    first,
                    Some(format!("corroborated by proposal {second} (LLM)")),
                );
                if let Some(mid) = written["memory_id"].as_str() {
                    crate::ops::consent::applied(user, second, mid);
                }
            });
            match applied {
                Ok(()) => {
                    done.insert(*i);
                    done.insert(*j);
                    c.corroborated += 1;
                }
                Err(e) => {
                    pgrx::warning!(
                        "memory_consolidate: proposal {first} not applied: {}",
                        e.message
                    );
                    c.errors += 1;
                }
            }
        }
        fingerprint(user, p, same);
    }
}

/// A checked pair's verdict, so that the pair is not asked again within the fingerprint window
/// (the bookkeeping is the operator's: written as the owner).
fn fingerprint(user: &str, p: &Pair, same: bool) {
    as_owner(|| {
        spi::run(
            include_str!("../../sql/queries/consolidate_fingerprint.sql"),
            &[
                user.into(),
                p.a.as_str().into(),
                p.b.as_str().into(),
                round2(p.score).into(),
                if same { "same" } else { "different" }.into(),
            ],
            "recording a fingerprint",
        )
    });
}

fn merge_pair(user: &str, keep: &str, lose: &str, score: f64) -> bool {
    let meta = json!({ "merged_into": keep, "score": round2(score) }).to_string();
    hints::with_reason_and_meta("merge", &meta, || {
        spi::one_opt::<bool>(
            include_str!("../../sql/queries/consolidate_merge.sql"),
            &[
                user.into(),
                keep.into(),
                lose.into(),
                gucs::purge_after_days().into(),
            ],
            "merging a pair",
        )
        .unwrap_or(false)
    })
}

fn link_pair(user: &str, a: &str, b: &str, score: f64) -> bool {
    spi::one_opt::<i64>(
        include_str!("../../sql/queries/consolidate_link.sql"),
        &[user.into(), a.into(), b.into(), (score as f32).into()],
        "linking a pair",
    )
    .unwrap_or(0)
        > 0
}

/// memory_consolidate: the run for one tenant (`user_id`, or the current tenant) or, with
/// neither, every tenant the caller may see; the counts summed.
pub fn run(user_id: Option<&str>, max_pairs: i64) -> Value {
    let mut total = Counts::default();
    for user in tenants(user_id) {
        total.add(consolidate_tenant(&user, max_pairs));
    }
    total.json()
}
