//! The detail-memory tools (memory_core::tools::detail): open a placeholder a part at a time,
//! store a long text for a placeholder, find details by their descriptions (src/ops/detail.rs).

use super::{day, Cx};
use crate::ops::detail;
use crate::pg::limits;
use memory_core::render;
use memory_core::tools::{Call, PAGE_SIZE};
use serde_json::json;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx {
        user,
        agent_id,
        thread,
        ..
    } = *cx;
    Ok(match c {
        Call::RefGet { key, offset } => {
            let r = detail::get(&key, offset, REF_PAGE_CHARS);
            let content = r["content"].as_str().unwrap_or_default().to_string();
            match r["next_offset"].as_i64() {
                Some(next) => format!(
                    "{content}\n[characters {}-{} of {}; call memory_ref_get with offset {next} for more]",
                    offset,
                    next,
                    r["total"]
                ),
                None => content,
            }
        }
        Call::DetailStore {
            content,
            description,
            kind,
        } => {
            limits::value_bytes("content", content.len());
            let r = detail::ref_store(
                Some(user),
                &content,
                &description,
                &kind,
                thread,
                Some(agent_id),
                json!({}),
            );
            format!(
                "Stored. Keep this placeholder instead of the content: {}\nretrieve_memory with \
                 memory_key \"{}\" opens it.",
                r["placeholder"].as_str().unwrap_or_default(),
                r["key"].as_str().unwrap_or_default()
            )
        }
        Call::DetailSearch {
            query,
            thread: within,
        } => {
            limits::query("query", &query);
            let found = detail::search(Some(user), &query, within.as_deref(), None, PAGE_SIZE);
            if found.is_empty() {
                "No stored details found.".to_string()
            } else {
                found
                    .iter()
                    .map(|(key, description, kind, _, _, chars, at, _)| {
                        format!(
                            "- {} ({}, {chars} characters, {})",
                            memory_core::detail::placeholder(key, description),
                            render::inline(kind),
                            day(at)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// Characters of a stored detail one memory_ref_get call returns.
const REF_PAGE_CHARS: i64 = 4000;
