//! The long-term memory tools: store a fact (`archival_insert`), search by meaning and keywords
//! a page at a time (`archival_search`), and memory_query's ranked bullets (`memory_query`),
//! under Letta's names and MemGPT's (`archival_memory_*`). They run in
//! src/ops/tools/archival.rs.

use super::{enum_of, int, object, page, string, tags, Agent, Call, Family, Parse, Role, Tool};
use serde_json::{json, Value};

fn category(agent: &Agent) -> Value {
    match &agent.categories {
        Some(c) => enum_of("Optional category of the memory.", c),
        None => string("Optional category of the memory, e.g. preferences, health, work."),
    }
}

pub const INSERT: Tool = Tool {
    name: "archival_insert",
    family: Family::Archival,
    default: true,
    roles: &[Role::WritesMemory],
    spec: |agent| {
        (
            "Store a fact in long-term memory, to be found later by archival_search. Write one \
             self-contained fact in a short sentence that names who it is about (\"Sam is \
             allergic to peanuts.\"), not a transcript."
                .into(),
            object(
                vec![
                    (
                        "content",
                        string("The fact, at most 280 characters, naming who it is about."),
                    ),
                    ("category", category(agent)),
                    ("tags", tags()),
                ],
                &["content"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::ArchivalInsert {
            content: a.nonempty("content")?,
            category: a.category()?,
            tags: a.list("tags")?,
        })
    }),
};

pub const SEARCH: Tool = Tool {
    name: "archival_search",
    family: Family::Archival,
    default: true,
    roles: &[Role::SearchesMemory, Role::Paged],
    spec: |_| {
        (
            "Search long-term memory by meaning and keywords. Results show when each memory \
             happened and its tags; ask for the next page if the answer is not there."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("page", page()),
                    (
                        "tags",
                        json!({"type": "array", "items": {"type": "string"},
                               "description": "Only memories with all of these tags."}),
                    ),
                ],
                &["query"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::ArchivalSearch {
            query: a.nonempty("query")?,
            page: a.int("page")? as usize,
            tags: a.list("tags")?,
        })
    }),
};

pub const QUERY: Tool = Tool {
    name: "memory_query",
    family: Family::Archival,
    default: false,
    roles: &[Role::SearchesMemory],
    spec: |agent| {
        (
            "Recall what you know about the user: the memories most relevant to the query, \
             ranked, each with the day it happened."
                .into(),
            object(
                vec![
                    ("query", string("What you need to know, in plain words.")),
                    ("top_k", int("How many memories, at most.", 1, 50, 5)),
                    ("category", category(agent)),
                ],
                &["query"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::Query {
            query: a.nonempty("query")?,
            top_k: a.int("top_k")?,
            category: a.category()?,
        })
    }),
};

/// MemGPT's names for the same tools (its prompts use them).
pub const MEMGPT_INSERT: Tool = Tool {
    name: "archival_memory_insert",
    default: false,
    ..INSERT
};
pub const MEMGPT_SEARCH: Tool = Tool {
    name: "archival_memory_search",
    default: false,
    ..SEARCH
};
