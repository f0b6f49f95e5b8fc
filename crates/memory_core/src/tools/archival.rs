//! The long-term memory tools: store a fact (`archival_insert`), search by meaning and keywords
//! a page at a time (`archival_search`), memory_query's ranked bullets with its filters
//! (`memory_query`), and fix what is wrong (`memory_correct`, `memory_forget`), under Letta's
//! names and MemGPT's (`archival_memory_*`). They run in src/ops/tools/archival.rs.

use super::{
    enum_of, int, object, page, page_size, string, tags, Agent, Args, Call, Family, Parse, Role,
    Tool,
};
use serde_json::{json, Map, Value};

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
                    ("top_k", page_size()),
                    (
                        "tags",
                        json!({"type": "array", "items": {"type": "string"},
                               "description": "Only memories with all of these tags."}),
                    ),
                    (
                        "start_datetime",
                        string("Only what happened from this time on (ISO 8601)."),
                    ),
                    (
                        "end_datetime",
                        string("Only what happened up to this time (ISO 8601)."),
                    ),
                ],
                &["query"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let (after, before) = (
            a.opt_time("start_datetime", false)?,
            a.opt_time("end_datetime", true)?,
        );
        if let (Some(x), Some(y)) = (after, before) {
            if y < x {
                return Err("\"end_datetime\" must not be before \"start_datetime\"".into());
            }
        }
        Ok(Call::ArchivalSearch {
            query: a.nonempty("query")?,
            page: a.int("page")? as usize,
            size: a.int("top_k")? as usize,
            tags: a.list("tags")?,
            after,
            before,
        })
    }),
};

/// The kinds a model may ask memory_query for. `detail` is left out: stored details are
/// opened by their key (`memory_ref_get`), not recalled as facts.
const QUERY_KINDS: [&str; 5] = ["semantic", "episodic", "procedural", "insight", "archival"];

/// memory_query as a tool: the filters a model can fill from the conversation (what kind of
/// memory, about whom, which tags, when it happened, what was true on a day, how important).
/// Left out, and why: `threshold` (a score a model cannot calibrate), `budget_tokens` and
/// `return` (the application sizes and shapes the prompt; the model has `top_k`), ids of
/// threads, runs and actors (the model does not see them), `explain` and `rerank` (tuning).
pub const QUERY: Tool = Tool {
    name: "memory_query",
    family: Family::Archival,
    default: false,
    roles: &[Role::SearchesMemory],
    spec: |agent| {
        let day = |d: &str| json!({"type": "string", "format": "date", "description": d});
        (
            "Recall what you know: the memories most relevant to the query, ranked, each with \
             the day it happened. For how to do something (deploy, release, set up), ask for \
             kinds [\"procedural\"]: numbered steps learned from past runs."
                .into(),
            object(
                vec![
                    ("query", string("What you need to know, in plain words.")),
                    ("top_k", int("How many memories, at most.", 1, 50, 5)),
                    ("category", category(agent)),
                    (
                        "kinds",
                        json!({"type": "array", "items": {"type": "string", "enum": QUERY_KINDS},
                               "description": "Only these kinds: semantic (facts), episodic \
                               (what happened), procedural (steps), insight, archival."}),
                    ),
                    (
                        "entity",
                        string("Only memories about this person, place or thing, by name."),
                    ),
                    (
                        "tags",
                        json!({"type": "array", "items": {"type": "string"},
                               "description": "Only memories with all of these tags."}),
                    ),
                    (
                        "since",
                        day("Only what happened on or after this day, YYYY-MM-DD."),
                    ),
                    (
                        "until",
                        day("Only what happened on or before this day, YYYY-MM-DD."),
                    ),
                    (
                        "as_of",
                        day("What was true on this day, YYYY-MM-DD (before later changes)."),
                    ),
                    (
                        "min_importance",
                        int("Only memories at least this important (1-5).", 1, 5, 1),
                    ),
                ],
                &["query"],
            ),
        )
    },
    parse: Parse::Args(query_request),
};

/// The memory_query request of a tool call (`Call::Query`).
fn query_request(a: &Args) -> Result<Call, String> {
    let query = a.nonempty("query")?;
    let mut r = Map::new();
    let mut filters = Map::new();
    r.insert("top_k".into(), json!(a.int("top_k")?));
    if let Some(c) = a.category()? {
        r.insert("categories".into(), json!([c]));
    }
    let kinds = a.list_of("kinds")?;
    if !kinds.is_empty() {
        r.insert("kinds".into(), json!(kinds));
    } else if asks_how(&query) {
        // "How do we deploy?" asks for steps: procedural memories join the other kinds (recall
        // leaves them out unless asked, docs/api.md "Kinds in recall").
        r.insert("kinds".into(), json!(QUERY_KINDS));
    }
    if let Some(e) = a.opt_text("entity")?.filter(|e| !e.trim().is_empty()) {
        r.insert("entity".into(), json!(e.trim()));
    }
    let tags = a.list("tags")?;
    if !tags.is_empty() {
        filters.insert("tags".into(), json!(tags));
    }
    let (since, until) = (a.opt_day("since")?, a.opt_day("until")?);
    if let (Some(s), Some(u)) = (since, until) {
        if u < s {
            return Err("\"until\" must not be before \"since\"".into());
        }
    }
    if let Some(s) = since {
        filters.insert("happened_after".into(), json!(format!("{s}T00:00:00Z")));
    }
    if let Some(u) = until.and_then(|u| u.succ_opt()) {
        filters.insert("happened_before".into(), json!(format!("{u}T00:00:00Z")));
    }
    if let Some(d) = a.opt_day("as_of")? {
        r.insert("as_of".into(), json!(format!("{d}T23:59:59Z")));
    }
    if let Some(i) = a.opt_int("min_importance")? {
        filters.insert("importance_min".into(), json!(i));
    }
    r.insert("query".into(), json!(query));
    r.insert("filters".into(), Value::Object(filters));
    Ok(Call::Query {
        request: Value::Object(r),
    })
}

/// Whether a query asks how to do something: then the steps of procedural memories answer it.
pub fn asks_how(query: &str) -> bool {
    let q = query.to_lowercase();
    let words: Vec<&str> = q
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let starts = |pair: [&str; 2]| words.windows(2).any(|w| w == pair);
    ["do", "to", "should", "can", "did", "does"]
        .iter()
        .any(|v| starts(["how", v]))
        || words.iter().any(|w| {
            matches!(
                *w,
                "steps" | "procedure" | "procedures" | "runbook" | "checklist" | "playbook"
            )
        })
}

/// A memory as the model names it: its id, or its text as a search showed it. The bullet's
/// `- `, `(YYYY-MM-DD) ` and `[category] ` and a `(tags: ...)` ending are taken off: the model
/// copies the line it read.
pub fn quoted_memory(s: &str) -> String {
    // Stored texts are whitespace-normalised (crate::text::normalize): so is the quote.
    let s = crate::text::normalize(s);
    let mut t = s.as_str();
    t = t.strip_prefix("- ").unwrap_or(t).trim_start();
    if t.starts_with('(') && t.get(11..12) == Some(")") {
        t = t[12..].trim_start();
    }
    if t.starts_with('[') {
        if let Some(end) = t.find("] ") {
            t = t[end + 2..].trim_start();
        }
    }
    if let Some(i) = t.rfind(" (tags: ") {
        if t.ends_with(')') {
            t = &t[..i];
        }
    }
    t.trim().to_string()
}

fn memory_arg() -> Value {
    string(
        "The memory: its text exactly as a search showed it (the line may be pasted whole), or \
         its id.",
    )
}

pub const FORGET: Tool = Tool {
    name: "memory_forget",
    family: Family::Archival,
    default: false,
    roles: &[Role::FixesMemory],
    spec: |_| {
        (
            "Forget a long-term memory that is wrong or that the user asks you to forget. It \
             leaves recall at once and is deleted for good later."
                .into(),
            object(vec![("memory", memory_arg())], &["memory"]),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::Forget {
            memory: quoted_memory(&a.nonempty("memory")?),
        })
    }),
};

pub const CORRECT: Tool = Tool {
    name: "memory_correct",
    family: Family::Archival,
    default: false,
    roles: &[Role::FixesMemory],
    spec: |_| {
        (
            "Correct a long-term memory: the corrected statement replaces it (the old one is \
             kept as history, out of recall). Write the whole corrected fact, naming who it is \
             about."
                .into(),
            object(
                vec![
                    ("memory", memory_arg()),
                    (
                        "correction",
                        string("The corrected fact, at most 280 characters."),
                    ),
                ],
                &["memory", "correction"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::Correct {
            memory: quoted_memory(&a.nonempty("memory")?),
            text: a.nonempty("correction")?,
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
