//! The agent tools: the definitions `memory_tools` will hand to a model and the rules that turn
//! a model's tool call into one typed call (`memory_tool_call`), with no Postgres in sight.
//!
//! # Why a small default set
//! Every tool definition sits in every request's prompt. Memory servers that expose 30-40 tools
//! spend 10-15k tokens on definitions before the conversation starts, and models pick worse
//! among many similar tools. So an agent gets six tools unless it asks for more by name: edit
//! a core block (replace, append), store and search long-term memory, search the conversation,
//! and open a stored detail (a `[MemoryRef: ...]` placeholder). The rest (line inserts, the
//! bulleted `memory_query`, listing a conversation by date, MemGPT's names) are offered by name.
//!
//! # Why the definitions depend on the agent
//! A model should never be offered what it may not do: read-only blocks are not edit targets
//! (the `block` enum lists writable labels only, and with none the edit tools are left out),
//! a category allowlist becomes the `category` enum, and an agent-level tool allowlist removes
//! the rest. A call that breaks these rules anyway comes back as an error the model can act on.
//!
//! # Why errors are text, not SQL errors
//! A model reads the error and tries again ("block must be one of: human, persona"); a SQL
//! exception would end the agent's turn. `parse` returns such a message for every bad argument.

pub mod memory;
pub mod prompt;

use crate::error::{SqlError, SqlState};
use serde_json::{json, Map, Value};
use std::str::FromStr;

/// A caller's mistake in naming a format, a tool or a prompt part (22023); the message lists
/// what there is. A model's mistakes are not errors but text for it (`parse`).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ToolError(pub String);

impl SqlError for ToolError {
    fn sqlstate(&self) -> SqlState {
        SqlState::InvalidParameterValue
    }
}

/// The shape of the definitions: which API they are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Chat Completions `tools`: `{"type": "function", "function": {name, description, parameters}}`.
    OpenAi,
    /// Messages API `tools`: `{name, description, input_schema}`.
    Anthropic,
    /// MCP `tools/list` entries: `{name, description, inputSchema}`.
    Mcp,
}

impl FromStr for Format {
    type Err = ToolError;
    fn from_str(s: &str) -> Result<Self, ToolError> {
        match s {
            "openai" => Ok(Format::OpenAi),
            "anthropic" => Ok(Format::Anthropic),
            "mcp" => Ok(Format::Mcp),
            _ => Err(ToolError(format!(
                "format must be one of openai, anthropic, mcp; got \"{s}\""
            ))),
        }
    }
}

/// What the agent may do, as the database knows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Agent {
    /// Labels of the core blocks it may edit (read-only ones left out), sorted.
    pub writable_blocks: Vec<String>,
    /// The categories it may write and read (docs/design.md "Categories and allowlists");
    /// `None`: any.
    pub categories: Option<Vec<String>>,
    /// The tools it may use at all (an agent-level allowlist); `None`: any.
    pub tools: Option<Vec<String>>,
}

/// The tools offered when a caller names none.
pub const DEFAULT_TOOLS: [&str; 6] = [
    "memory_replace",
    "memory_append",
    "archival_insert",
    "archival_search",
    "conversation_search",
    "memory_ref_get",
];

/// Every tool there is, by name: the defaults, then those offered only by name. MemGPT's names
/// (`core_memory_*`, `archival_memory_*`) are the same tools under the names its prompts use.
pub const ALL_TOOLS: [&str; 23] = [
    "memory_replace",
    "memory_append",
    "archival_insert",
    "archival_search",
    "conversation_search",
    "memory_ref_get",
    "memory_insert",
    "memory_query",
    "conversation_search_date",
    "core_memory_append",
    "core_memory_replace",
    "archival_memory_insert",
    "archival_memory_search",
    "memory",
    "memory_file_ls",
    "memory_file_read",
    "memory_file_grep",
    "memory_file_search",
    "store_memory",
    "retrieve_memory",
    "search_memory",
    "summarize_conversation",
    "archive_old_messages",
];

/// Seed 001 §6's `memory_ls`, `memory_read`, `memory_grep` and `memory_search`, named after the
/// SQL functions they call (`memory_search` is already memory_query's mem0-style search): the
/// whole file tree, episodes and roll-ups included, where the `memory` tool keeps to `/memories`.
pub const FILE_TOOLS: [&str; 4] = [
    "memory_file_ls",
    "memory_file_read",
    "memory_file_grep",
    "memory_file_search",
];

/// Characters one `memory_file_read` call returns (as a `memory` view's page).
pub const READ_PAGE_CHARS: usize = 16_000;

/// Results per page of the paged searches (MemGPT's page size).
pub const PAGE_SIZE: usize = 5;

fn edits_blocks(name: &str) -> bool {
    matches!(
        name,
        "memory_replace"
            | "memory_append"
            | "memory_insert"
            | "core_memory_append"
            | "core_memory_replace"
    )
}

/// The tools to offer: `requested` (or the defaults), in that order, less what `agent` may not
/// use. An unknown name is an error naming it (a caller's mistake, not the model's).
pub fn select(agent: &Agent, requested: Option<&[String]>) -> Result<Vec<&'static str>, ToolError> {
    let names: Vec<String> = match requested {
        Some(r) => r.to_vec(),
        None => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
    };
    let mut out: Vec<&'static str> = vec![];
    for n in &names {
        let Some(&t) = ALL_TOOLS.iter().find(|t| **t == n.as_str()) else {
            return Err(ToolError(format!(
                "unknown tool \"{n}\"; tools are: {}",
                ALL_TOOLS.join(", ")
            )));
        };
        let allowed = agent
            .tools
            .as_ref()
            .is_none_or(|a| a.iter().any(|x| x == t));
        let can = !edits_blocks(t) || !agent.writable_blocks.is_empty();
        if allowed && can && !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

fn string(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}

fn enum_of(desc: &str, values: &[String]) -> Value {
    json!({"type": "string", "description": desc, "enum": values})
}

fn int(desc: &str, min: i64, max: i64, default: i64) -> Value {
    json!({"type": "integer", "description": desc, "minimum": min, "maximum": max, "default": default})
}

fn object(props: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let mut m = Map::new();
    for (k, v) in props {
        m.insert(k.to_string(), v);
    }
    json!({"type": "object", "properties": m, "required": required, "additionalProperties": false})
}

/// (description, parameters as JSON Schema) of tool `name` for `agent`.
fn spec(name: &str, agent: &Agent) -> (String, Value) {
    let block = || {
        enum_of(
            "Label of the core memory block to edit.",
            &agent.writable_blocks,
        )
    };
    let tags = || {
        json!({"type": "array", "items": {"type": "string"},
               "description": "Optional tags, e.g. [\"work\", \"travel\"]."})
    };
    let category = || match &agent.categories {
        Some(c) => enum_of("Optional category of the memory.", c),
        None => string("Optional category of the memory, e.g. preferences, health, work."),
    };
    let page = || int("Page of results, from 0.", 0, 1000, 0);
    let date = |d: &str| json!({"type": "string", "format": "date", "description": d});
    match name {
        "memory_replace" | "core_memory_replace" => (
            "Replace text in one of your core memory blocks (always in your context). `old` must \
             occur exactly once in the block; to delete text, replace it with an empty string."
                .into(),
            object(
                vec![
                    ("block", block()),
                    ("old", string("The exact text to replace.")),
                    ("new", string("The text to put in its place.")),
                ],
                &["block", "old", "new"],
            ),
        ),
        "memory_append" | "core_memory_append" => (
            "Add a line to the end of one of your core memory blocks, for something you should \
             always keep in mind about the user or yourself."
                .into(),
            object(
                vec![
                    ("block", block()),
                    ("content", string("The text to add, one or two sentences.")),
                ],
                &["block", "content"],
            ),
        ),
        "memory_insert" => (
            "Insert text at a line of one of your core memory blocks.".into(),
            object(
                vec![
                    ("block", block()),
                    ("content", string("The text to insert.")),
                    (
                        "line",
                        int(
                            "Line number to insert before, from 0; -1 for the end.",
                            -1,
                            10_000,
                            -1,
                        ),
                    ),
                ],
                &["block", "content"],
            ),
        ),
        "archival_insert" | "archival_memory_insert" => (
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
                    ("category", category()),
                    ("tags", tags()),
                ],
                &["content"],
            ),
        ),
        "archival_search" | "archival_memory_search" => (
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
        ),
        "conversation_search" => (
            "Search past messages of your conversations with the user, including those no longer \
             in your context. Results show when each message was sent and by whom."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("page", page()),
                ],
                &["query"],
            ),
        ),
        "conversation_search_date" => (
            "List past messages of all your conversations sent between two dates, oldest first."
                .into(),
            object(
                vec![
                    ("start_date", date("First day, YYYY-MM-DD.")),
                    ("end_date", date("Last day, YYYY-MM-DD (included).")),
                    ("page", page()),
                ],
                &["start_date", "end_date"],
            ),
        ),
        "memory_ref_get" => (
            "Open a stored detail from a placeholder like [MemoryRef: key - description]: \
             returns its content, a part at a time."
                .into(),
            object(
                vec![
                    ("key", string("The key from the placeholder.")),
                    (
                        "offset",
                        int("Character offset to read from.", 0, i64::from(i32::MAX), 0),
                    ),
                ],
                &["key"],
            ),
        ),
        "memory_query" => (
            "Recall what you know about the user: the memories most relevant to the query, \
             ranked, each with the day it happened."
                .into(),
            object(
                vec![
                    ("query", string("What you need to know, in plain words.")),
                    ("top_k", int("How many memories, at most.", 1, 50, 5)),
                    ("category", category()),
                ],
                &["query"],
            ),
        ),
        "memory_file_ls" => (
            "List your memory files (notes, episodes/, projects/ roll-ups, memories/) under a \
             directory, with title, size and last change."
                .into(),
            object(
                vec![
                    (
                        "prefix",
                        string("A directory, e.g. episodes/2024-05-08; empty for all files."),
                    ),
                    ("limit", int("How many files, at most.", 1, 200, 50)),
                ],
                &[],
            ),
        ),
        "memory_file_read" => (
            "Read one of your memory files by its path (as memory_file_ls, memory_file_search or your \
             memory context show it), 16,000 characters at a time."
                .into(),
            object(
                vec![
                    ("path", string("The file's path, e.g. episodes/2024-05-08/run-1.md.")),
                    (
                        "offset",
                        int("Character offset to read from.", 0, i64::from(i32::MAX), 0),
                    ),
                ],
                &["path"],
            ),
        ),
        "memory_file_grep" => (
            "Find the lines of your memory files that match a regular expression, each with \
             its path and line number."
                .into(),
            object(
                vec![
                    ("pattern", string("A regular expression (POSIX), e.g. deploy|release.")),
                    ("prefix", string("Only files under this directory; empty for all.")),
                    ("limit", int("How many lines, at most.", 1, 100, 20)),
                ],
                &["pattern"],
            ),
        ),
        "memory_file_search" => (
            "Search your memory files (notes, episodes, project roll-ups) by meaning and \
             keywords: the best files with path, day and a snippet. Open one with memory_file_read."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("tags", json!({"type": "array", "items": {"type": "string"},
                                    "description": "Only files with all of these tags."})),
                    ("limit", int("How many files, at most.", 1, 20, 3)),
                ],
                &["query"],
            ),
        ),
        "store_memory" => (
            "Store a long text (a command's output, a document, a result) in detail memory and \
             get a short placeholder [MemoryRef: key - description] to keep in your context \
             instead; retrieve_memory opens it again."
                .into(),
            object(
                vec![
                    ("content", string("The text to store, whole.")),
                    ("description", string("A few words on what it is, e.g. npm install log.")),
                    ("type", string("Its kind, e.g. command_output, file_content, api_response.")),
                ],
                &["content", "description"],
            ),
        ),
        "retrieve_memory" => (
            "Open a stored detail by the key of its placeholder [MemoryRef: key - description]: \
             its content, a part at a time."
                .into(),
            object(
                vec![
                    ("memory_key", string("The key from the placeholder.")),
                    (
                        "offset",
                        int("Character offset to read from.", 0, i64::from(i32::MAX), 0),
                    ),
                ],
                &["memory_key"],
            ),
        ),
        "search_memory" => (
            "Find stored details (outputs and documents kept with store_memory or captured) by \
             what their descriptions say: their keys and descriptions, best first."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("thread_id", string("Only details stored in this conversation.")),
                ],
                &["query"],
            ),
        ),
        "summarize_conversation" => (
            "Summarise older messages of this conversation into the summary at the top of your \
             context, to free room; they stay searchable with conversation_search. Turns are \
             the conversation's message numbers (seq)."
                .into(),
            object(
                vec![
                    ("focus", string("What the summary should keep, e.g. decisions about the API.")),
                    ("keep_last", int("Newest messages to leave as they are.", 0, 1000, 10)),
                    ("start_turn", int("First message to summarise (seq).", 1, i64::MAX, 1)),
                    ("end_turn", int("Last message to summarise (seq), included.", 1, i64::MAX, 1)),
                ],
                &[],
            ),
        ),
        "archive_old_messages" => (
            "Take every message before a turn out of your context, summarised first; they stay \
             searchable with conversation_search."
                .into(),
            object(
                vec![(
                    "before_turn",
                    int("Archive the messages before this one (seq).", 1, i64::MAX, 1),
                )],
                &["before_turn"],
            ),
        ),
        "memory" => (
            "Anthropic's memory tool: a directory of files under /memories that persists between \
             conversations. view a directory or a file (view_range [start, end]), create, \
             str_replace, insert (after insert_line, 0 = top), delete, rename."
                .into(),
            object(
                vec![
                    (
                        "command",
                        enum_of(
                            "What to do.",
                            &[
                                "view",
                                "create",
                                "str_replace",
                                "insert",
                                "delete",
                                "rename",
                            ]
                            .map(String::from),
                        ),
                    ),
                    (
                        "path",
                        string("A path under /memories, e.g. /memories/notes.md."),
                    ),
                    (
                        "view_range",
                        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                               "description": "view: first and last line, 1-based; -1 for the end."}),
                    ),
                    ("file_text", string("create: the file's content.")),
                    (
                        "old_str",
                        string("str_replace: text that occurs exactly once."),
                    ),
                    ("new_str", string("str_replace: its replacement.")),
                    (
                        "insert_line",
                        int(
                            "insert: the line to insert after, 0 = top.",
                            0,
                            1_000_000,
                            0,
                        ),
                    ),
                    ("insert_text", string("insert: the text to insert.")),
                    ("old_path", string("rename: the current path.")),
                    ("new_path", string("rename: the new path.")),
                ],
                &["command"],
            ),
        ),
        _ => unreachable!("select() returns known names only"),
    }
}

/// The definitions of `tools` for `agent` in `format`, as a JSON array.
pub fn definitions(tools: &[&str], agent: &Agent, format: Format) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|name| {
                let (description, params) = spec(name, agent);
                // Anthropic's memory tool is built into their API: it is named, not described.
                if format == Format::Anthropic && *name == "memory" {
                    return json!({"type": "memory_20250818", "name": "memory"});
                }
                match format {
                    Format::OpenAi => json!({"type": "function", "function": {
                        "name": name, "description": description, "parameters": params}}),
                    Format::Anthropic => {
                        json!({"name": name, "description": description, "input_schema": params})
                    }
                    Format::Mcp => {
                        json!({"name": name, "description": description, "inputSchema": params})
                    }
                }
            })
            .collect(),
    )
}

/// One tool call, its arguments checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    BlockReplace {
        label: String,
        old: String,
        new: String,
    },
    BlockAppend {
        label: String,
        content: String,
    },
    BlockInsert {
        label: String,
        content: String,
        line: i64,
    },
    ArchivalInsert {
        content: String,
        category: Option<String>,
        tags: Vec<String>,
    },
    ArchivalSearch {
        query: String,
        page: usize,
        tags: Vec<String>,
    },
    ConversationSearch {
        query: String,
        page: usize,
    },
    ConversationSearchDate {
        start: chrono::NaiveDate,
        end: chrono::NaiveDate,
        page: usize,
    },
    RefGet {
        key: String,
        offset: i64,
    },
    Query {
        query: String,
        top_k: i64,
        category: Option<String>,
    },
    /// Anthropic's memory tool (memory.rs).
    Memory(memory::Command),
    FileList {
        prefix: String,
        limit: i64,
    },
    FileRead {
        path: String,
        offset: i64,
    },
    FileGrep {
        pattern: String,
        prefix: String,
        limit: i64,
    },
    FileSearch {
        query: String,
        tags: Vec<String>,
        limit: i64,
    },
    DetailStore {
        content: String,
        description: String,
        kind: String,
    },
    DetailSearch {
        query: String,
        thread: Option<String>,
    },
    /// summarize_conversation: a range of seq when given, else all but the newest `keep_last`.
    Summarize {
        from: Option<i64>,
        to: Option<i64>,
        keep_last: i64,
        focus: Option<String>,
    },
    Archive {
        before: i64,
    },
}

/// A path a model gave a file tool, as the store names it: `/episodes/x.md` and `episodes/x.md`
/// are one file (the `memory` tool's paths start with `/`). Refused as memory-file paths are.
fn file_arg(path: &str) -> Result<String, String> {
    let p = path.trim();
    crate::files::path(Some(p.strip_prefix('/').unwrap_or(p))).map_err(|e| e.to_string())
}

/// A directory a model gave a file tool; empty or `/` for every file.
fn dir_arg(prefix: Option<&str>) -> Result<String, String> {
    let p = prefix.unwrap_or("").trim();
    crate::files::prefix(Some(p.trim_start_matches('/'))).map_err(|e| e.to_string())
}

/// Checks a model's call of `name` with `args` against `agent`'s rules; the error is a message
/// for the model.
pub fn parse(name: &str, args: &Value, agent: &Agent) -> Result<Call, String> {
    let offered = select(agent, Some(&[name.to_string()]))
        .map_err(|_| format!("there is no tool \"{name}\"; use one of the tools you were given"))?;
    if offered.is_empty() {
        return Err(format!("the tool \"{name}\" is not available to you"));
    }
    if name == "memory" {
        return memory::Command::parse(args).map(Call::Memory);
    }
    let empty = Map::new();
    let obj = match args {
        Value::Object(o) => o,
        Value::Null => &empty,
        _ => return Err("arguments must be a JSON object".into()),
    };
    let (_, schema) = spec(name, agent);
    let known: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // An optional argument given as "" is absent: a model held to a strict schema (every field
    // required) fills the ones it does not mean with empty strings.
    let obj: Map<String, Value> = obj
        .iter()
        .filter(|(k, v)| required.contains(&k.as_str()) || v.as_str() != Some(""))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let obj = &obj;
    if let Some(k) = obj.keys().find(|k| !known.contains(k)) {
        return Err(format!(
            "unknown argument \"{k}\"; {name} takes: {}",
            known
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let text = |k: &str| -> Result<String, String> {
        match obj.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("\"{k}\" must be a string")),
            None => Err(format!("\"{k}\" is required")),
        }
    };
    let nonempty = |k: &str| -> Result<String, String> {
        let s = text(k)?;
        if s.trim().is_empty() {
            Err(format!("\"{k}\" must not be empty"))
        } else {
            Ok(s)
        }
    };
    let opt_text = |k: &str| -> Result<Option<String>, String> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            _ => text(k).map(Some),
        }
    };
    let integer = |k: &str, min: i64, max: i64, default: i64| -> Result<i64, String> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => match v.as_i64().or_else(|| {
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                    .map(|f| f as i64)
            }) {
                Some(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(format!(
                    "\"{k}\" must be a whole number from {min} to {max}"
                )),
            },
        }
    };
    let list = |k: &str| -> Result<Vec<String>, String> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(vec![]),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("\"{k}\" must be a list of strings"))
                })
                .collect(),
            // Letta-style tool calls pass tags as one comma-separated string.
            Some(Value::String(s)) => Ok(s
                .split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect()),
            Some(_) => Err(format!("\"{k}\" must be a list of strings")),
        }
    };
    let block = || -> Result<String, String> {
        let l = text("block")?;
        if agent.writable_blocks.contains(&l) {
            Ok(l)
        } else {
            Err(format!(
                "block \"{l}\" cannot be edited; block must be one of: {}",
                agent.writable_blocks.join(", ")
            ))
        }
    };
    let category = || -> Result<Option<String>, String> {
        // Normalised as memory_write normalises it, so the allowlist compares what is stored.
        let c = opt_text("category")?
            .map(|c| crate::names::category(&c).map_err(|e| e.to_string()))
            .transpose()?;
        match (&c, &agent.categories) {
            (Some(x), Some(allowed)) if !allowed.contains(x) => Err(format!(
                "category \"{x}\" is not allowed; category must be one of: {}",
                allowed.join(", ")
            )),
            _ => Ok(c),
        }
    };
    let page = || integer("page", 0, 1000, 0).map(|p| p as usize);
    let day = |k: &str| -> Result<chrono::NaiveDate, String> {
        let s = text(k)?;
        chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
            .map_err(|_| format!("\"{k}\" must be a date like 2024-05-08, got \"{s}\""))
    };
    Ok(match name {
        "memory_replace" | "core_memory_replace" => Call::BlockReplace {
            label: block()?,
            old: nonempty("old")?,
            new: text("new")?,
        },
        "memory_append" | "core_memory_append" => Call::BlockAppend {
            label: block()?,
            content: nonempty("content")?,
        },
        "memory_insert" => Call::BlockInsert {
            label: block()?,
            content: nonempty("content")?,
            line: integer("line", -1, 10_000, -1)?,
        },
        "archival_insert" | "archival_memory_insert" => Call::ArchivalInsert {
            content: nonempty("content")?,
            category: category()?,
            tags: list("tags")?,
        },
        "archival_search" | "archival_memory_search" => Call::ArchivalSearch {
            query: nonempty("query")?,
            page: page()?,
            tags: list("tags")?,
        },
        "conversation_search" => Call::ConversationSearch {
            query: nonempty("query")?,
            page: page()?,
        },
        "conversation_search_date" => {
            let (start, end) = (day("start_date")?, day("end_date")?);
            if end < start {
                return Err("\"end_date\" must not be before \"start_date\"".into());
            }
            Call::ConversationSearchDate {
                start,
                end,
                page: page()?,
            }
        }
        "memory_ref_get" => Call::RefGet {
            key: nonempty("key")?,
            offset: integer("offset", 0, i64::from(i32::MAX), 0)?,
        },
        "memory_query" => Call::Query {
            query: nonempty("query")?,
            top_k: integer("top_k", 1, 50, 5)?,
            category: category()?,
        },
        "memory_file_ls" => Call::FileList {
            prefix: dir_arg(opt_text("prefix")?.as_deref())?,
            limit: integer("limit", 1, 200, 50)?,
        },
        "memory_file_read" => Call::FileRead {
            path: file_arg(&nonempty("path")?)?,
            offset: integer("offset", 0, i64::from(i32::MAX), 0)?,
        },
        "memory_file_grep" => Call::FileGrep {
            pattern: nonempty("pattern")?,
            prefix: dir_arg(opt_text("prefix")?.as_deref())?,
            limit: integer("limit", 1, 100, 20)?,
        },
        "memory_file_search" => Call::FileSearch {
            query: nonempty("query")?,
            tags: list("tags")?,
            limit: integer("limit", 1, 20, 3)?,
        },
        "store_memory" => Call::DetailStore {
            content: nonempty("content")?,
            description: nonempty("description")?,
            kind: match opt_text("type")? {
                None => "command_output".into(),
                Some(t) if crate::detail::valid_type(t.trim()) => t.trim().to_string(),
                Some(t) => {
                    return Err(format!(
                        "\"type\" must be 1-50 letters, digits, '_', '.' or '-' (e.g. \
                         command_output), got \"{}\"",
                        crate::render::inline(&t.chars().take(60).collect::<String>())
                    ))
                }
            },
        },
        "retrieve_memory" => Call::RefGet {
            key: nonempty("memory_key")?,
            offset: integer("offset", 0, i64::from(i32::MAX), 0)?,
        },
        "summarize_conversation" => {
            let opt = |k: &str| -> Result<Option<i64>, String> {
                match obj.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    _ => integer(k, 1, i64::MAX, 1).map(Some),
                }
            };
            let (from, to) = (opt("start_turn")?, opt("end_turn")?);
            if let (Some(f), Some(t)) = (from, to) {
                if t < f {
                    return Err("\"end_turn\" must not be before \"start_turn\"".into());
                }
            }
            Call::Summarize {
                from,
                to,
                keep_last: integer("keep_last", 0, 1000, 10)?,
                focus: opt_text("focus")?.filter(|f| !f.trim().is_empty()),
            }
        }
        "archive_old_messages" => Call::Archive {
            before: match obj.get("before_turn") {
                None | Some(Value::Null) => return Err("\"before_turn\" is required".into()),
                _ => integer("before_turn", 1, i64::MAX, 1)?,
            },
        },
        "search_memory" => Call::DetailSearch {
            query: nonempty("query")?,
            thread: opt_text("thread_id")?.filter(|t| !t.trim().is_empty()),
        },
        _ => unreachable!("select() returns known names only"),
    })
}

/// A SQL error raised while a tool call ran, as the model reads it: what was wrong and what to
/// do. memory_ext's own errors (docs/api.md "Errors") are written for their reader and pass
/// through (rendered on one line, crate::render); Postgres's own (a NUL character, the
/// full-text index's length limit, stack depth, a concurrent change) are not, so each gets a
/// sentence the model can act on. The SQLSTATE is kept in the call's event, not shown.
pub fn error_text(sqlstate: &str, message: &str) -> String {
    let said = || crate::render::inline(message).into_owned();
    match sqlstate {
        "22023" | "22001" | "22004" | "P0002" | "42501" | "0A000" | "58P01" => said(),
        "22P05" | "22021" => {
            "The text contains a character that cannot be stored (such as the NUL \
             character \\u0000): remove it and try again."
                .into()
        }
        "2201B" => "The regular expression is not valid: fix it (or escape the special \
             characters) and try again."
            .into(),
        "54000" => "The text is too long to index in one piece: split it into smaller parts and \
             try again."
            .into(),
        "54001" => "The input is nested or repeated too deeply to process: make it shorter and \
             simpler, and try again."
            .into(),
        "23505" => "Something with that name was created at the same moment by another call: look \
             again (view or search) and retry with what is there now."
            .into(),
        "23514" => "The result would break a limit of the memory store (for example a path over \
             512 characters): make it shorter and try again."
            .into(),
        "57014" => "The call took longer than the server allows and was stopped: ask for less \
             (a narrower search, a smaller edit) and try again."
            .into(),
        "40001" | "40P01" | "55P03" => {
            "Another call changed the same memory at the same moment: try again.".into()
        }
        "58000" => format!(
            "A service this call needs is unavailable right now ({}): try again later.",
            said()
        ),
        _ => "The memory store could not complete this call (an internal error): try again \
             later, or go on without it."
            .into(),
    }
}

/// MemGPT's paging line over `total` results: "Showing 6-10 of 23 results (page 1; pages 0 to
/// 4)."; for a page past the end, where the last page is.
pub fn page_line(page: usize, total: usize) -> String {
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    if total == 0 {
        return "No results found.".into();
    }
    if page >= pages {
        return format!(
            "No results on page {page}: there are {total} results on pages 0 to {}.",
            pages - 1
        );
    }
    let from = page * PAGE_SIZE + 1;
    let to = (from + PAGE_SIZE - 1).min(total);
    // Pages count from 0, as the `page` argument does; "page 0 of 0" read as no pages at all.
    if pages == 1 {
        return format!("Showing {from}-{to} of {total} results (all on this page).");
    }
    format!(
        "Showing {from}-{to} of {total} results (page {page}; pages 0 to {}).",
        pages - 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn agent() -> Agent {
        Agent {
            writable_blocks: vec!["human".into(), "persona".into()],
            categories: None,
            tools: None,
        }
    }

    #[test]
    fn the_default_set_is_six_tools_in_under_2000_tokens_in_every_format() {
        let a = agent();
        let tools = select(&a, None).unwrap();
        assert_eq!(tools, DEFAULT_TOOLS.to_vec());
        for f in [Format::OpenAi, Format::Anthropic, Format::Mcp] {
            let defs = definitions(&tools, &a, f).to_string();
            let n = Encoding::Cl100kBase.count(&defs);
            eprintln!("{f:?}: {} tools, {n} tokens (cl100k_base)", tools.len());
            assert!(n <= 2000, "{f:?}: {n} tokens");
            assert!(
                n > 300,
                "{f:?}: {n} tokens is too few to be the definitions"
            );
        }
    }

    #[test]
    fn each_format_has_its_documented_shape() {
        let a = agent();
        let t = ["archival_search"];
        let o = &definitions(&t, &a, Format::OpenAi)[0];
        assert_eq!(o["type"], "function");
        assert_eq!(o["function"]["name"], "archival_search");
        assert_eq!(o["function"]["parameters"]["type"], "object");
        let an = &definitions(&t, &a, Format::Anthropic)[0];
        assert_eq!(an["input_schema"]["required"], json!(["query"]));
        assert!(an.get("type").is_none());
        let m = &definitions(&t, &a, Format::Mcp)[0];
        assert_eq!(m["inputSchema"]["properties"]["page"]["type"], "integer");
        assert!("xml".parse::<Format>().is_err());
    }

    #[test]
    fn read_only_blocks_are_not_offered_and_not_editable() {
        let mut a = agent();
        a.writable_blocks = vec!["human".into()];
        let d = definitions(&["memory_replace"], &a, Format::Mcp);
        assert_eq!(
            d[0]["inputSchema"]["properties"]["block"]["enum"],
            json!(["human"])
        );
        let e = parse(
            "memory_append",
            &json!({"block": "persona", "content": "x"}),
            &a,
        )
        .unwrap_err();
        assert!(e.contains("one of: human"), "{e}");
        // No writable block: no edit tool at all.
        a.writable_blocks.clear();
        let tools = select(&a, None).unwrap();
        assert_eq!(tools.len(), 4);
        assert!(parse(
            "memory_append",
            &json!({"block": "human", "content": "x"}),
            &a
        )
        .unwrap_err()
        .contains("not available"));
    }

    #[test]
    fn allowlists_shape_the_offer_and_the_calls() {
        let mut a = agent();
        a.categories = Some(vec!["food".into(), "health".into()]);
        a.tools = Some(vec!["archival_insert".into(), "archival_search".into()]);
        assert_eq!(
            select(&a, None).unwrap(),
            vec!["archival_insert", "archival_search"]
        );
        let d = definitions(&["archival_insert"], &a, Format::OpenAi);
        assert_eq!(
            d[0]["function"]["parameters"]["properties"]["category"]["enum"],
            json!(["food", "health"])
        );
        let e = parse(
            "archival_insert",
            &json!({"content": "Sam runs.", "category": "sport"}),
            &a,
        )
        .unwrap_err();
        assert!(e.contains("food, health"), "{e}");
        assert!(parse("conversation_search", &json!({"query": "x"}), &a).is_err());
        assert!(select(&a, Some(&["nope".to_string()])).is_err());
    }

    #[test]
    fn anthropics_memory_tool_is_named_for_anthropic_and_described_for_the_rest() {
        let a = agent();
        let t = select(&a, Some(&["memory".to_string()])).unwrap();
        assert_eq!(
            definitions(&t, &a, Format::Anthropic),
            json!([{"type": "memory_20250818", "name": "memory"}])
        );
        let m = &definitions(&t, &a, Format::Mcp)[0];
        assert_eq!(m["inputSchema"]["required"], json!(["command"]));
        assert_eq!(
            parse(
                "memory",
                &json!({"command": "delete", "path": "/memories/a"}),
                &a
            )
            .unwrap(),
            Call::Memory(memory::Command::Delete {
                path: "/memories/a".into()
            })
        );
    }

    #[test]
    fn bad_arguments_get_messages_a_model_can_act_on() {
        let a = agent();
        let cases = [
            ("archival_search", json!({}), "\"query\" is required"),
            ("archival_search", json!({"query": 3}), "must be a string"),
            (
                "archival_search",
                json!({"query": "x", "page": -1}),
                "0 to 1000",
            ),
            (
                "archival_search",
                json!({"query": "x", "k": 1}),
                "unknown argument \"k\"",
            ),
            ("archival_search", json!([1]), "JSON object"),
            (
                "memory_replace",
                json!({"block": "human", "old": "", "new": "y"}),
                "not be empty",
            ),
            (
                "conversation_search_date",
                json!({"start_date": "May 8", "end_date": "2024-05-09"}),
                "like 2024-05-08",
            ),
            (
                "conversation_search_date",
                json!({"start_date": "2024-05-09", "end_date": "2024-05-08"}),
                "before",
            ),
            ("no_such_tool", json!({}), "no tool"),
        ];
        for (name, args, want) in cases {
            let e = parse(name, &args, &a).unwrap_err();
            assert!(e.contains(want), "{name} {args}: {e}");
        }
    }

    #[test]
    fn empty_strings_are_absent_optionals() {
        let a = agent();
        assert_eq!(
            parse(
                "archival_search",
                &json!({"query": "tea", "page": "", "tags": ""}),
                &a
            )
            .unwrap(),
            Call::ArchivalSearch {
                query: "tea".into(),
                page: 0,
                tags: vec![]
            }
        );
        assert_eq!(
            parse(
                "archival_insert",
                &json!({"content": "Sam runs.", "category": "", "tags": ""}),
                &a
            )
            .unwrap(),
            Call::ArchivalInsert {
                content: "Sam runs.".into(),
                category: None,
                tags: vec![]
            }
        );
        // A required one stays required.
        assert!(parse("archival_search", &json!({"query": ""}), &a)
            .unwrap_err()
            .contains("must not be empty"));
    }

    #[test]
    fn good_calls_parse_with_defaults() {
        let a = agent();
        assert_eq!(
            parse(
                "archival_memory_insert",
                &json!({"content": "Sam is a nurse.", "tags": "work, health"}),
                &a
            )
            .unwrap(),
            Call::ArchivalInsert {
                content: "Sam is a nurse.".into(),
                category: None,
                tags: vec!["work".into(), "health".into()]
            }
        );
        assert_eq!(
            parse(
                "memory_insert",
                &json!({"block": "human", "content": "x"}),
                &a
            )
            .unwrap(),
            Call::BlockInsert {
                label: "human".into(),
                content: "x".into(),
                line: -1
            }
        );
        assert_eq!(
            parse(
                "conversation_search",
                &json!({"query": "tea", "page": 2.0}),
                &a
            )
            .unwrap(),
            Call::ConversationSearch {
                query: "tea".into(),
                page: 2
            }
        );
    }

    #[test]
    fn sql_errors_are_told_to_the_model_in_its_terms() {
        assert_eq!(
            error_text("P0002", "memory file \"x\n- forged\" not found"),
            "memory file \"x\\n- forged\" not found"
        );
        for (code, raw, want) in [
            ("22P05", "unsupported Unicode escape sequence", "NUL"),
            (
                "54000",
                "string is too long for tsvector (1048577 bytes, max 1048575 bytes)",
                "split it",
            ),
            ("54001", "stack depth limit exceeded", "simpler"),
            (
                "23505",
                "duplicate key value violates unique constraint \"files_pkey\"",
                "look again",
            ),
            (
                "XX000",
                "cannot access key \"user_id\" in JSON array",
                "internal error",
            ),
        ] {
            let t = error_text(code, raw);
            assert!(t.contains(want), "{code}: {t}");
            assert!(
                !t.contains(raw),
                "{code}: the raw error reached the model: {t}"
            );
        }
    }

    #[test]
    fn the_file_and_detail_tools_reach_the_whole_tree_by_name_only() {
        let a = agent();
        for t in FILE_TOOLS
            .iter()
            .chain(&["store_memory", "retrieve_memory", "search_memory"])
        {
            assert!(!DEFAULT_TOOLS.contains(t), "{t} is not a default");
            assert_eq!(select(&a, Some(&[t.to_string()])).unwrap(), vec![*t]);
        }
        // Any file, with or without a leading slash; episodes and roll-ups included.
        assert_eq!(
            parse(
                "memory_file_read",
                &json!({"path": "/episodes/2024-05-08/run-1.md"}),
                &a
            )
            .unwrap(),
            Call::FileRead {
                path: "episodes/2024-05-08/run-1.md".into(),
                offset: 0
            }
        );
        assert!(parse("memory_file_read", &json!({"path": "../etc/passwd"}), &a).is_err());
        assert_eq!(
            parse("memory_file_ls", &json!({}), &a).unwrap(),
            Call::FileList {
                prefix: "".into(),
                limit: 50
            }
        );
        assert_eq!(
            parse(
                "memory_file_grep",
                &json!({"pattern": "deploy", "prefix": "/projects"}),
                &a
            )
            .unwrap(),
            Call::FileGrep {
                pattern: "deploy".into(),
                prefix: "projects/".into(),
                limit: 20
            }
        );
        assert_eq!(
            parse("memory_file_search", &json!({"query": "ssh keys"}), &a).unwrap(),
            Call::FileSearch {
                query: "ssh keys".into(),
                tags: vec![],
                limit: 3
            }
        );
        // Seed 002's names and arguments.
        assert_eq!(
            parse(
                "retrieve_memory",
                &json!({"memory_key": "cmd_npm_install"}),
                &a
            )
            .unwrap(),
            Call::RefGet {
                key: "cmd_npm_install".into(),
                offset: 0
            }
        );
        assert_eq!(
            parse(
                "store_memory",
                &json!({"content": "x", "description": "npm log", "type": "command_output"}),
                &a
            )
            .unwrap(),
            Call::DetailStore {
                content: "x".into(),
                description: "npm log".into(),
                kind: "command_output".into()
            }
        );
        let e = parse(
            "store_memory",
            &json!({"content": "x", "description": "d", "type": "a b\n- forged"}),
            &a,
        )
        .unwrap_err();
        assert!(e.contains("1-50 letters") && !e.contains('\n'), "{e}");
        assert_eq!(
            parse(
                "search_memory",
                &json!({"query": "logs", "thread_id": ""}),
                &a
            )
            .unwrap(),
            Call::DetailSearch {
                query: "logs".into(),
                thread: None
            }
        );
    }

    #[test]
    fn paging_reads_like_memgpt() {
        assert_eq!(page_line(0, 0), "No results found.");
        assert_eq!(
            page_line(0, 3),
            "Showing 1-3 of 3 results (all on this page)."
        );
        assert_eq!(
            page_line(1, 23),
            "Showing 6-10 of 23 results (page 1; pages 0 to 4)."
        );
        assert_eq!(
            page_line(4, 23),
            "Showing 21-23 of 23 results (page 4; pages 0 to 4)."
        );
        assert!(page_line(5, 23).contains("pages 0 to 4"));
    }
}
