//! The long-term memory tools (memory_core::tools::archival): archival_insert writes through
//! memory_write's path (src/ops/write.rs) as the model's inference; archival_search pages
//! memory_query's ranking; memory_query answers its bullets; memory_forget forgets as
//! memory_forget does (src/ops/lifecycle.rs) and memory_correct supersedes through the write
//! path, as the model's inference.

use super::{paged, Cx, MAX_RESULTS};
use crate::error::OrRaise;
use crate::gucs;
use crate::ops::{query, search, write};
use crate::pg::{limits, spi};
use memory_core::render;
use memory_core::request::{self, Filters};
use memory_core::tools::{self, Agent, Call};
use memory_core::when;
use serde_json::{json, Value};

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx {
        user,
        agent_id,
        thread,
        agent: a,
    } = *cx;
    Ok(match c {
        Call::ArchivalInsert {
            content,
            category,
            tags,
        } => {
            // Checked here too (the write path checks `text`) to name the argument the model sent.
            limits::value_bytes("content", content.len());
            // A tool call is the model's inference, not the user's statement
            // (memory_ext.tool_source): a sensitive category waits for consent.
            let mut req = json!({"user_id": user, "text": content, "kind": "archival",
                                 "agent_id": agent_id, "tags": tags,
                                 "source": gucs::tool_source()});
            if let Some(c) = category {
                req["category"] = json!(c);
            }
            if let Some(t) = thread {
                req["thread_id"] = json!(t);
            }
            written(&write::write_json(&req))
        }
        Call::ArchivalSearch {
            query,
            page,
            size,
            tags,
            after,
            before,
        } => {
            limits::query("query", &query);
            let filters = Filters {
                user_id: Some(user.to_string()),
                tags: (!tags.is_empty()).then_some(tags),
                happened_after: after,
                happened_before: before,
                ..Filters::default()
            };
            paged_memories(user, agent_id, a, &query, filters, page, size)?
        }
        Call::Query { mut request } => {
            limits::query("query", request["query"].as_str().unwrap_or_default());
            // The tenant, the agent (its category allowlist applies) and the thread are the
            // call's, whatever the model sent; memory_query's parser checks the rest again.
            request["agent"] = json!(agent_id);
            request["filters"]["user_id"] = json!(user);
            request["return"] = json!("bullets");
            if let Some(t) = thread {
                request["thread_id"] = json!(t);
            }
            let req = request;
            let r = query::run_query(&request::parse_query(&req).or_raise());
            // Each memory with its strongest related memory (memory_query's `related`).
            let mut lines: Vec<String> = vec![];
            for i in &items(&r) {
                lines.push(format!("- {}", i["text"].as_str().unwrap_or_default()));
                if let Some(rel) = i["related"][0].as_str() {
                    lines.push(format!("  related: {rel}"));
                }
            }
            if lines.is_empty() {
                "No memories found.".to_string()
            } else {
                lines.join("\n")
            }
        }
        Call::Forget { memory } => {
            let (id, text, _, _) = find_memory(cx, &memory)?;
            // Another call may have forgotten it since it was found (models call tools in
            // parallel): then this one changed nothing, and says so.
            let r = crate::ops::lifecycle::forget(&id, false);
            if r["event"] == "soft_deleted" {
                format!(
                    "Forgotten: \"{}\". It is out of recall now and will be deleted for good.",
                    render::inline(&text)
                )
            } else {
                format!("Already forgotten: \"{}\".", render::inline(&text))
            }
        }
        Call::Correct { memory, text } => {
            limits::value_bytes("correction", text.len());
            let (id, _, category, kind) = find_memory(cx, &memory)?;
            // A correction is the model's inference too: a sensitive field waits for consent
            // (the write path's gate), as archival_insert does.
            let mut req = json!({"user_id": user, "text": text, "supersedes": id, "kind": kind,
                                 "agent_id": agent_id, "source": gucs::tool_source()});
            if let Some(c) = category {
                req["category"] = json!(c);
            }
            if let Some(t) = thread {
                req["thread_id"] = json!(t);
            }
            match written(&write::write_json(&req)).as_str() {
                s if s.starts_with("Not saved") => s.to_string(),
                _ => "Corrected: the new statement replaced the old one in long-term memory."
                    .to_string(),
            }
        }
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// What a write's answer tells the model (archival_insert, memory_correct).
fn written(r: &Value) -> String {
    match r["event"].as_str() {
        Some("noop") => "Already in long-term memory.".to_string(),
        Some("proposed") => {
            let field = render::inline(r["category"].as_str().unwrap_or("this field"));
            if r["policy"] == "corroborate" {
                format!(
                    "Not saved yet: a change to \"{field}\" is saved once a second, \
                     independent sign says the same."
                )
            } else {
                format!(
                    "Not saved yet: a change to \"{field}\" needs the user's consent. It \
                     is proposed and will be saved when the user approves it."
                )
            }
        }
        Some("updated") => {
            "Long-term memory updated: it merged with a memory saying nearly the same.".to_string()
        }
        _ => "Saved to long-term memory.".to_string(),
    }
}

/// The active memory a model named (memory_forget, memory_correct): by id, or by its text as a
/// search showed it; within the categories the agent may read. (id, text, category, kind).
fn find_memory(cx: &Cx, memory: &str) -> Result<(String, String, Option<String>, String), String> {
    let categories = query::allowed_categories(
        cx.user,
        cx.agent.categories.is_some().then_some(cx.agent_id),
        None,
    );
    let by_id = memory_core::request::is_uuid(memory);
    let found = spi::rows(
        include_str!("../../../sql/queries/tools_find_memory.sql"),
        &[
            cx.user.into(),
            memory.into(),
            by_id.into(),
            categories.into(),
        ],
        "finding a memory",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
                r.get::<String>(4)?.unwrap_or_default(),
            ))
        },
    );
    match found.len() {
        1 => Ok(found.into_iter().next().unwrap_or_default()),
        0 => Err(format!(
            "No memory reads \"{}\": search for it and quote it exactly as the result shows it.",
            render::inline(memory)
        )),
        n => Err(format!(
            "{n} memories read \"{}\": quote more of the one you mean, or give its id.",
            render::inline(memory)
        )),
    }
}

/// archival_search: memory_query's ranking (the same search engine, src/ops/search/), a page
/// of it, each line with its day and tags. Only the memories on the page count as read
/// (`last_accessed_at`): the model saw those, not the other 45.
fn paged_memories(
    user: &str,
    agent_id: &str,
    a: &Agent,
    query: &str,
    filters: Filters,
    page: usize,
    size: usize,
) -> Result<String, String> {
    // "How do we deploy?" wants the steps of procedural memories too (memory_core's tool
    // rule, tools::archival::asks_how); other searches leave them out.
    let filters = Filters {
        kinds: tools::archival::asks_how(query).then(|| {
            memory_core::request::KINDS
                .iter()
                .filter(|k| **k != "detail")
                .map(|k| k.to_string())
                .collect()
        }),
        ..filters
    };
    let categories =
        query::allowed_categories(user, a.categories.is_some().then_some(agent_id), None);
    let window = crate::pg::fulltext::time_window(user, query, when::now());
    // The caller's own memories and its spaces' (docs/api.md "Spaces"), in one ranking.
    let mut hits = query::with_spaces(user, Some(agent_id), None, |owners| {
        search::memories(
            owners,
            query,
            None,
            &filters,
            categories.as_deref(),
            MAX_RESULTS,
            window,
            gucs::rerank(),
        )
    });
    hits.truncate(MAX_RESULTS);
    let shown: Vec<String> = hits
        .iter()
        .skip(page * size)
        .take(size)
        .map(|h| h.id.clone())
        .collect();
    // The page's memories show their strongest related memory under them (memory_query's
    // bullets do the same), on the same entry: a page is `size` entries, whatever they hold.
    let page_hits: Vec<search::Hit> = hits
        .iter()
        .filter(|h| shown.contains(&h.id) && h.space.is_none())
        .cloned()
        .collect();
    let related = query::related_bullets(user, &page_hits, categories.as_deref());
    let lines: Vec<String> = hits
        .iter()
        .map(|h| {
            let mut line = if h.tags.is_empty() {
                format!("- {}", h.line())
            } else {
                let tags: Vec<String> = h
                    .tags
                    .iter()
                    .map(|t| render::inline(t).into_owned())
                    .collect();
                format!("- {} (tags: {})", h.line(), tags.join(", "))
            };
            if let Some(space) = &h.space {
                line.push_str(&format!(" (space: {})", render::inline(space)));
            }
            if let Some(r) = related.get(&h.id) {
                line.push_str("\n  related: ");
                line.push_str(r);
            }
            line
        })
        .collect();
    crate::ops::access::record(user, &shown);
    Ok(paged(&lines, page, size))
}

fn items(r: &Value) -> Vec<Value> {
    r["items"].as_array().cloned().unwrap_or_default()
}
