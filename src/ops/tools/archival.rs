//! The long-term memory tools (memory_core::tools::archival): archival_insert writes through
//! memory_write's path (src/ops/write.rs) as the model's inference; archival_search pages
//! memory_query's ranking; memory_query answers its bullets.

use super::{paged, Cx, MAX_RESULTS};
use crate::error::OrRaise;
use crate::gucs;
use crate::ops::{query, search, write};
use crate::pg::limits;
use memory_core::render;
use memory_core::request::{self, Filters};
use memory_core::tools::{Agent, Call, PAGE_SIZE};
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
            let r = write::write_json(&req);
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
                    "Long-term memory updated: it merged with a memory saying nearly the same."
                        .to_string()
                }
                _ => "Saved to long-term memory.".to_string(),
            }
        }
        Call::ArchivalSearch { query, page, tags } => {
            limits::query("query", &query);
            paged_memories(user, agent_id, a, &query, tags, page)?
        }
        Call::Query {
            query,
            top_k,
            category,
        } => {
            limits::query("query", &query);
            let mut req = json!({"query": query, "top_k": top_k, "agent": agent_id,
                                 "filters": {"user_id": user}, "return": "bullets"});
            if let Some(c) = category {
                req["categories"] = json!([c]);
            }
            if let Some(t) = thread {
                req["thread_id"] = json!(t);
            }
            let r = query::run_query(&request::parse_query(&req).or_raise());
            let lines: Vec<String> = items(&r)
                .iter()
                .map(|i| format!("- {}", i["text"].as_str().unwrap_or_default()))
                .collect();
            if lines.is_empty() {
                "No memories found.".to_string()
            } else {
                lines.join("\n")
            }
        }
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// archival_search: memory_query's ranking (the same search engine, src/ops/search/), a page
/// of it, each line with its day and tags. Only the memories on the page count as read
/// (`last_accessed_at`): the model saw those, not the other 45.
fn paged_memories(
    user: &str,
    agent_id: &str,
    a: &Agent,
    query: &str,
    tags: Vec<String>,
    page: usize,
) -> Result<String, String> {
    let filters = Filters {
        user_id: Some(user.to_string()),
        tags: (!tags.is_empty()).then_some(tags),
        ..Filters::default()
    };
    let categories =
        query::allowed_categories(user, a.categories.is_some().then_some(agent_id), None);
    let window = when::window(query, when::now());
    let mut hits = search::memories(
        user,
        query,
        None,
        &filters,
        categories.as_deref(),
        MAX_RESULTS,
        window,
        gucs::rerank(),
    );
    hits.truncate(MAX_RESULTS);
    let lines: Vec<String> = hits
        .iter()
        .map(|h| {
            if h.tags.is_empty() {
                format!("- {}", h.line())
            } else {
                let tags: Vec<String> = h
                    .tags
                    .iter()
                    .map(|t| render::inline(t).into_owned())
                    .collect();
                format!("- {} (tags: {})", h.line(), tags.join(", "))
            }
        })
        .collect();
    let shown: Vec<String> = hits
        .iter()
        .skip(page * PAGE_SIZE)
        .take(PAGE_SIZE)
        .map(|h| h.id.clone())
        .collect();
    query::touch(user, &shown);
    Ok(paged(&lines, page))
}

fn items(r: &Value) -> Vec<Value> {
    r["items"].as_array().cloned().unwrap_or_default()
}
