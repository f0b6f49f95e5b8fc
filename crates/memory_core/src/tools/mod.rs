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

pub mod archival;
pub mod blocks;
pub mod compaction;
pub mod consent;
pub mod conversation;
pub mod detail;
pub mod entities;
pub mod files;
pub mod memory;
pub mod prompt;
pub mod summaries;

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
    /// The file directories it may write with the file tools (memory_file_allowlist), each
    /// ending in `/`; `None`: none (Anthropic's memory tool keeps its own `/memories`).
    pub file_paths: Option<Vec<String>>,
}

/// The families of tools: the tools of one family are declared in one file here (their
/// definitions and argument checks) and run in the file of the same name in src/ops/tools/.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Blocks,
    Archival,
    Conversation,
    Detail,
    Files,
    Compaction,
    /// Anthropic's memory tool (memory.rs).
    Memory,
    /// Consent by chat: the proposals waiting for the user, and the user's answer.
    Consent,
    /// The people, places and things memories are about.
    Entities,
    /// The summaries the worker keeps.
    Summaries,
}

/// What a tool does, as the prompt (prompt.rs) speaks of it: a part of the prompt names the
/// tools of its role that the agent is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    EditsBlocks,
    SearchesMemory,
    SearchesConversation,
    /// Answers a page at a time (MemGPT's paging).
    Paged,
    Compacts,
    OpensRefs,
    StoresDetails,
    SearchesDetails,
    WritesMemory,
    MemoryDirectory,
    ReadsFiles,
    /// Writes memory files under the directories the application allows.
    WritesFiles,
    /// Corrects or forgets a long-term memory.
    FixesMemory,
    /// Lists proposals and records the user's answer.
    Consents,
}

/// How a tool's arguments are checked: against its definition's parameters (`Args`), or, for
/// Anthropic's memory tool, by its own command rules.
#[derive(Clone, Copy)]
pub enum Parse {
    Args(fn(&Args) -> Result<Call, String>),
    Raw(fn(&Value) -> Result<Call, String>),
}

/// One agent tool: its name, its family, whether it is offered by default, what the prompt
/// says it does, its definition for an agent (description and JSON Schema parameters) and the
/// check that turns a model's arguments into a `Call`.
#[derive(Clone, Copy)]
pub struct Tool {
    pub name: &'static str,
    pub family: Family,
    pub default: bool,
    pub roles: &'static [Role],
    pub spec: fn(&Agent) -> (String, Value),
    pub parse: Parse,
}

impl Tool {
    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }
}

/// Every tool, registered once: memory_tools, memory_tool_call, memory_prompt, the gateway and
/// docs/api.md's tool list read this table. The defaults come first, in the order they are
/// offered; then the tools offered only by name. MemGPT's names (`core_memory_*`,
/// `archival_memory_*`) are the same tools under the names its prompts use. Adding a tool:
/// docs/architecture.md "Recipes".
pub const TOOLS: [Tool; 32] = [
    blocks::REPLACE,
    blocks::APPEND,
    archival::INSERT,
    archival::SEARCH,
    conversation::SEARCH,
    detail::REF_GET,
    blocks::INSERT,
    archival::QUERY,
    conversation::SEARCH_DATE,
    blocks::CORE_APPEND,
    blocks::CORE_REPLACE,
    archival::MEMGPT_INSERT,
    archival::MEMGPT_SEARCH,
    memory::TOOL,
    files::LS,
    files::READ,
    files::GREP,
    files::SEARCH,
    detail::STORE,
    detail::RETRIEVE,
    detail::SEARCH,
    compaction::SUMMARIZE,
    compaction::ARCHIVE,
    archival::FORGET,
    archival::CORRECT,
    files::WRITE,
    files::EDIT,
    files::DELETE,
    consent::PROPOSALS,
    consent::CONSENT,
    entities::LOOKUP,
    summaries::READ,
];

/// Every tool's name, in the table's order.
pub const ALL_TOOLS: [&str; TOOLS.len()] = {
    let mut out = [""; TOOLS.len()];
    let mut i = 0;
    while i < TOOLS.len() {
        out[i] = TOOLS[i].name;
        i += 1;
    }
    out
};

const fn defaults() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < TOOLS.len() {
        if TOOLS[i].default {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The tools offered when a caller names none, in the table's order.
pub const DEFAULT_TOOLS: [&str; defaults()] = {
    let mut out = [""; defaults()];
    let (mut n, mut i) = (0, 0);
    while i < TOOLS.len() {
        if TOOLS[i].default {
            out[n] = TOOLS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
};

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Of `tools`, those with `role`, in their order.
pub fn with_role<'a>(tools: &[&'a str], role: Role) -> Vec<&'a str> {
    tools
        .iter()
        .copied()
        .filter(|n| tool(n).is_some_and(|t| t.has(role)))
        .collect()
}

/// Characters one `memory_file_read` call returns (as a `memory` view's page).
pub const READ_PAGE_CHARS: usize = 16_000;

/// Results per page of the paged searches when the call names no size (MemGPT's page size).
pub const PAGE_SIZE: usize = 5;

/// Most results one page may hold (`limit`, `top_k`): Letta's callers ask for 10 or 20; more
/// than this fills the model's context with weak matches.
pub const MAX_PAGE_SIZE: i64 = 50;

/// The tools to offer: `requested` (or the defaults), in that order, less what `agent` may not
/// use. An unknown name is an error naming it (a caller's mistake, not the model's).
pub fn select(agent: &Agent, requested: Option<&[String]>) -> Result<Vec<&'static str>, ToolError> {
    let names: Vec<String> = match requested {
        Some(r) => r.to_vec(),
        None => DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect(),
    };
    let mut out: Vec<&'static str> = vec![];
    for n in &names {
        let Some(t) = tool(n) else {
            return Err(ToolError(format!(
                "unknown tool \"{n}\"; tools are: {}",
                ALL_TOOLS.join(", ")
            )));
        };
        let allowed = agent
            .tools
            .as_ref()
            .is_none_or(|a| a.iter().any(|x| x == t.name));
        let can = (!t.has(Role::EditsBlocks) || !agent.writable_blocks.is_empty())
            && (!t.has(Role::WritesFiles)
                || agent.file_paths.as_ref().is_some_and(|p| !p.is_empty()));
        if allowed && can && !out.contains(&t.name) {
            out.push(t.name);
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

fn tags() -> Value {
    json!({"type": "array", "items": {"type": "string"},
           "description": "Optional tags, e.g. [\"work\", \"travel\"]."})
}

fn page() -> Value {
    int("Page of results, from 0.", 0, 1000, 0)
}

/// Results per page under `name` (`limit` for conversation_search, `top_k` for archival_search:
/// Letta's names for it).
fn page_size() -> Value {
    int("Results per page.", 1, MAX_PAGE_SIZE, PAGE_SIZE as i64)
}

/// The definitions of `tools` for `agent` in `format`, as a JSON array.
pub fn definitions(tools: &[&str], agent: &Agent, format: Format) -> Value {
    Value::Array(
        tools
            .iter()
            .filter_map(|name| tool(name))
            .map(|t| {
                let name = t.name;
                // Anthropic's memory tool is built into their API: it is named, not described.
                if format == Format::Anthropic && t.family == Family::Memory {
                    return json!({"type": "memory_20250818", "name": "memory"});
                }
                let (description, params) = (t.spec)(agent);
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
    /// With Letta's time window: memories that happened from `after` on and before `before`.
    ArchivalSearch {
        query: String,
        page: usize,
        size: usize,
        tags: Vec<String>,
        after: Option<chrono::DateTime<chrono::Utc>>,
        before: Option<chrono::DateTime<chrono::Utc>>,
    },
    /// With Letta's filters: roles, and the first and last day (both included).
    ConversationSearch {
        query: String,
        page: usize,
        size: usize,
        roles: Vec<String>,
        start: Option<chrono::NaiveDate>,
        end: Option<chrono::NaiveDate>,
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
    /// memory_query: the request's fields the tool took (`query`, `top_k`, `categories`,
    /// `kinds`, `entity`, `as_of`, `filters`), checked again by memory_query's own parser; the
    /// tenant, agent and thread are added where it runs.
    Query {
        request: Value,
    },
    /// memory_forget: the memory named by id or quoted as the model read it.
    Forget {
        memory: String,
    },
    /// memory_correct: the memory replaced by `text` (a supersede, as the model's inference).
    Correct {
        memory: String,
        text: String,
    },
    FileWrite {
        path: String,
        content: String,
    },
    FileEdit {
        path: String,
        old: String,
        new: String,
    },
    FileDelete {
        path: String,
    },
    Proposals,
    /// memory_entity: an entity by one of its names.
    Entity {
        name: String,
    },
    /// memory_summary: one summary by name, or the list of them.
    Summary {
        name: Option<String>,
    },
    /// memory_consent: `answer` as the model reports it; what counts is the user's message.
    Consent {
        proposal: String,
        answer: String,
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
        before: compaction::Before,
    },
}

/// A model's arguments to one tool, checked against the tool's parameters: no argument the
/// definition does not name, optional ones given as "" taken as absent. Each getter reads one
/// argument with the rules of its kind; whole numbers take their bounds and default from the
/// definition, so the two cannot disagree. Errors are messages for the model.
pub struct Args<'a> {
    obj: Map<String, Value>,
    schema: Value,
    agent: &'a Agent,
}

impl<'a> Args<'a> {
    fn new(name: &str, args: &Value, agent: &'a Agent, schema: Value) -> Result<Self, String> {
        let empty = Map::new();
        let obj = match args {
            Value::Object(o) => o,
            Value::Null => &empty,
            _ => return Err("arguments must be a JSON object".into()),
        };
        let known: Vec<&String> = schema["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let required = required(&schema);
        // An optional argument given as "" is absent: a model held to a strict schema (every
        // field required) fills the ones it does not mean with empty strings.
        let obj: Map<String, Value> = obj
            .iter()
            .filter(|(k, v)| required.contains(&k.as_str()) || v.as_str() != Some(""))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(k) = obj.keys().find(|k| !known.contains(k)) {
            return Err(format!(
                "unknown argument \"{}\"; {name} takes: {}",
                crate::render::inline(k),
                known
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(Args { obj, schema, agent })
    }

    /// What the agent may do (its writable blocks, categories, file directories).
    pub fn agent(&self) -> &Agent {
        self.agent
    }

    pub fn text(&self, k: &str) -> Result<String, String> {
        match self.obj.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("\"{k}\" must be a string")),
            None => Err(format!("\"{k}\" is required")),
        }
    }

    pub fn nonempty(&self, k: &str) -> Result<String, String> {
        let s = self.text(k)?;
        if s.trim().is_empty() {
            Err(format!("\"{k}\" must not be empty"))
        } else {
            Ok(s)
        }
    }

    pub fn opt_text(&self, k: &str) -> Result<Option<String>, String> {
        match self.obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            _ => self.text(k).map(Some),
        }
    }

    /// A whole number within the definition's minimum and maximum; absent, its default (or
    /// "required" when the definition requires it).
    pub fn int(&self, k: &str) -> Result<i64, String> {
        match self.obj.get(k) {
            None | Some(Value::Null) if required(&self.schema).contains(&k) => {
                Err(format!("\"{k}\" is required"))
            }
            None | Some(Value::Null) => Ok(self.schema["properties"][k]["default"]
                .as_i64()
                .unwrap_or(0)),
            Some(v) => {
                let p = &self.schema["properties"][k];
                let (min, max) = (
                    p["minimum"].as_i64().unwrap_or(i64::MIN),
                    p["maximum"].as_i64().unwrap_or(i64::MAX),
                );
                match v.as_i64().or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                        .map(|f| f as i64)
                }) {
                    Some(n) if (min..=max).contains(&n) => Ok(n),
                    _ => Err(format!(
                        "\"{k}\" must be a whole number from {min} to {max}"
                    )),
                }
            }
        }
    }

    /// A whole number as `int` reads it, or `None` when absent.
    pub fn opt_int(&self, k: &str) -> Result<Option<i64>, String> {
        match self.obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            _ => self.int(k).map(Some),
        }
    }

    pub fn list(&self, k: &str) -> Result<Vec<String>, String> {
        match self.obj.get(k) {
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
    }

    /// `block`: a label of a block the agent may edit.
    pub fn block(&self) -> Result<String, String> {
        let l = self.text("block")?;
        if self.agent.writable_blocks.contains(&l) {
            Ok(l)
        } else {
            Err(format!(
                "block \"{}\" cannot be edited; block must be one of: {}",
                crate::render::inline(&l),
                self.agent.writable_blocks.join(", ")
            ))
        }
    }

    /// `category`: normalised as memory_write normalises it, so the allowlist compares what is
    /// stored.
    pub fn category(&self) -> Result<Option<String>, String> {
        let c = self
            .opt_text("category")?
            .map(|c| crate::names::category(&c).map_err(|e| e.to_string()))
            .transpose()?;
        match (&c, &self.agent.categories) {
            (Some(x), Some(allowed)) if !allowed.contains(x) => Err(format!(
                "category \"{x}\" is not allowed; category must be one of: {}",
                allowed.join(", ")
            )),
            _ => Ok(c),
        }
    }

    /// A time (RFC 3339, or a day: its start; `end_of_day`: a day means through its end), or
    /// `None` when absent.
    pub fn opt_time(
        &self,
        k: &str,
        end_of_day: bool,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
        let Some(s) = self.opt_text(k)? else {
            return Ok(None);
        };
        let t = crate::request::parse_time(s.trim()).ok_or_else(|| {
            format!(
                "\"{k}\" must be a date or a time like 2024-05-08 or 2024-05-08T10:30:00Z, got \"{}\"",
                crate::render::inline(&s)
            )
        })?;
        let day_only = chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").is_ok();
        Ok(Some(if end_of_day && day_only {
            t + chrono::Duration::days(1)
        } else {
            t
        }))
    }

    /// A day as `day` reads it, or `None` when absent.
    pub fn opt_day(&self, k: &str) -> Result<Option<chrono::NaiveDate>, String> {
        match self.obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            _ => self.day(k).map(Some),
        }
    }

    /// A list of strings each one of the definition's `items.enum`.
    pub fn list_of(&self, k: &str) -> Result<Vec<String>, String> {
        let given = self.list(k)?;
        let allowed: Vec<&str> = self.schema["properties"][k]["items"]["enum"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match given.iter().find(|g| !allowed.contains(&g.as_str())) {
            Some(bad) => Err(format!(
                "\"{}\" is not one of {k}: {}",
                crate::render::inline(bad),
                allowed.join(", ")
            )),
            None => Ok(given),
        }
    }

    pub fn day(&self, k: &str) -> Result<chrono::NaiveDate, String> {
        let s = self.text(k)?;
        chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").map_err(|_| {
            format!(
                "\"{k}\" must be a date like 2024-05-08, got \"{}\"",
                crate::render::inline(&s)
            )
        })
    }
}

fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Checks a model's call of `name` with `args` against `agent`'s rules; the error is a message
/// for the model.
pub fn parse(name: &str, args: &Value, agent: &Agent) -> Result<Call, String> {
    let shown = crate::render::inline(name);
    let offered = select(agent, Some(&[name.to_string()])).map_err(|_| {
        format!("there is no tool \"{shown}\"; use one of the tools you were given")
    })?;
    let Some(t) = offered.first().and_then(|n| tool(n)) else {
        return Err(format!("the tool \"{shown}\" is not available to you"));
    };
    match t.parse {
        Parse::Raw(parse) => parse(args),
        Parse::Args(parse) => parse(&Args::new(name, args, agent, (t.spec)(agent).1)?),
    }
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
pub fn page_line(page: usize, total: usize, size: usize) -> String {
    let size = size.max(1);
    let pages = total.div_ceil(size).max(1);
    if total == 0 {
        return "No results found.".into();
    }
    if page >= pages {
        return format!(
            "No results on page {page}: there are {total} results on pages 0 to {}.",
            pages - 1
        );
    }
    let from = page * size + 1;
    let to = (from + size - 1).min(total);
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
            file_paths: Some(vec!["episodes/".into()]),
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
        // What each tool offered by name adds (shown with --nocapture; docs/api.md).
        for t in TOOLS.iter().filter(|t| !t.default) {
            let n =
                Encoding::Cl100kBase.count(&definitions(&[t.name], &a, Format::OpenAi).to_string());
            eprintln!("{}: {n} tokens (openai)", t.name);
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
                size: PAGE_SIZE,
                tags: vec![],
                after: None,
                before: None,
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
                page: 2,
                size: PAGE_SIZE,
                roles: vec![],
                start: None,
                end: None,
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
        for t in with_role(&ALL_TOOLS, Role::ReadsFiles).iter().chain(&[
            "store_memory",
            "retrieve_memory",
            "search_memory",
        ]) {
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
        // The detail-memory tools' names and arguments (store_memory, retrieve_memory, search_memory).
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
    fn what_a_model_sent_is_echoed_on_one_line() {
        let a = agent();
        let forged = "x\n- forged";
        for (name, args) in [
            ("memory_query", json!({"query": "q", "since": forged})),
            ("memory_query", json!({"query": "q", forged: 1})),
            ("memory_append", json!({"block": forged, "content": "c"})),
            (forged, json!({})),
        ] {
            let e = parse(name, &args, &a).unwrap_err();
            assert!(!e.contains('\n') && e.contains("\\n- forged"), "{e}");
        }
    }

    #[test]
    fn every_tool_in_the_table_is_defined_and_parses_its_own_arguments() {
        // Each tool once; its definition is an object schema; a call with no arguments is
        // either good (nothing required) or names a required argument, never a panic.
        let a = agent();
        let mut seen = std::collections::HashSet::new();
        for t in TOOLS {
            assert!(seen.insert(t.name), "{} twice", t.name);
            let (description, params) = (t.spec)(&a);
            assert!(!description.is_empty(), "{}", t.name);
            assert_eq!(params["type"], "object", "{}", t.name);
            for k in required(&params) {
                assert!(params["properties"].get(k).is_some(), "{}: {k}", t.name);
            }
            match parse(t.name, &json!({}), &a) {
                Ok(_) => assert!(required(&params).is_empty(), "{}", t.name),
                Err(e) => assert!(
                    e.contains("is required") || e.contains("command"),
                    "{}: {e}",
                    t.name
                ),
            }
        }
        assert_eq!(DEFAULT_TOOLS.len(), 6);
        assert!(DEFAULT_TOOLS.iter().all(|d| tool(d).unwrap().default));
    }

    /// The table of every tool in docs/api.md "Agent tools", from `TOOLS`: a tool added to the
    /// table and not to the docs fails here. `MEMORY_EXT_WRITE_DOCS=1 cargo test -p memory_core
    /// every_tool_is_in_the_docs` writes it.
    #[test]
    fn every_tool_is_in_the_docs() {
        let a = agent();
        let mut t = String::from(
            "| tool | family | offered | arguments (required in bold) |\n|---|---|---|---|\n",
        );
        for tool in TOOLS {
            let (_, params) = (tool.spec)(&a);
            let req = required(&params);
            let args: Vec<String> = params["properties"]
                .as_object()
                .map(|p| {
                    p.keys()
                        .map(|k| {
                            if req.contains(&k.as_str()) {
                                format!("**{k}**")
                            } else {
                                k.clone()
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            t.push_str(&format!(
                "| `{}` | {:?} | {} | {} |\n",
                tool.name,
                tool.family,
                if tool.default {
                    "by default"
                } else {
                    "by name"
                },
                args.join(", ")
            ));
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (begin, end) = (
            "<!-- tools: generated from memory_core::tools::TOOLS -->\n",
            "<!-- end of tools -->",
        );
        let (a0, b0) = (
            doc.find(begin).expect("the begin marker") + begin.len(),
            doc.find(end).expect("the end marker"),
        );
        if std::env::var("MEMORY_EXT_WRITE_DOCS").is_ok() {
            std::fs::write(path, format!("{}{t}{}", &doc[..a0], &doc[b0..])).unwrap();
            return;
        }
        assert_eq!(
            &doc[a0..b0],
            t,
            "docs/api.md's tool table is out of date: MEMORY_EXT_WRITE_DOCS=1 cargo test -p memory_core every_tool_is_in_the_docs"
        );
    }

    #[test]
    fn paging_reads_like_memgpt() {
        assert_eq!(page_line(0, 0, PAGE_SIZE), "No results found.");
        assert_eq!(
            page_line(0, 3, PAGE_SIZE),
            "Showing 1-3 of 3 results (all on this page)."
        );
        assert_eq!(
            page_line(1, 23, PAGE_SIZE),
            "Showing 6-10 of 23 results (page 1; pages 0 to 4)."
        );
        assert_eq!(
            page_line(4, 23, PAGE_SIZE),
            "Showing 21-23 of 23 results (page 4; pages 0 to 4)."
        );
        assert!(page_line(5, 23, PAGE_SIZE).contains("pages 0 to 4"));
    }
}
