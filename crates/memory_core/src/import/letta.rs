//! Letta's agent file (`.af`) into memory_export's shape, every version Letta has published:
//!
//! - **v1** (Letta 0.6–0.10, `letta/serialize_schemas/pydantic_agent_schema.py`): one agent at
//!   the top level, `core_memory` (its blocks), `messages` without ids and
//!   `in_context_message_indices`, `tools`, `tool_rules`, `version`. [`v1_as_v2`] rewrites it in
//!   the current shape, so one converter reads both.
//! - **v2** (`letta/schemas/agent_file.py` `AgentFileSchema`): `agents` (each with `block_ids`,
//!   `messages`, `in_context_message_ids`, `files_agents`, `group_ids`), the shared `blocks`,
//!   `files` and `sources` (folders), `tools`, `groups`, `mcp_servers`, `skills`, `metadata`.
//!
//! What memory_ext has no place for is named in the notes with a count; nothing is left out
//! silently. The converter makes rows only; sql/import.sql inserts them and the write path's
//! checks (crate::import::check_rows) run on them first.

use super::{text_of, uniform, Converted};
use crate::tokens::{self, Encoding};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Whether `doc` is a Letta agent file of the first version (one agent at the top level).
pub fn is_v1(doc: &Value) -> bool {
    doc.get("core_memory").is_some() && doc.get("messages").is_some() && doc.get("agents").is_none()
}

/// A v1 agent file in the v2 shape: its agent `agent-0`, its messages `message-<i>`, its blocks
/// inline (`memory_blocks`), its group (`multi_agent_group`) in `groups`.
pub fn v1_as_v2(doc: &Value) -> Value {
    let mut agent = Map::new();
    agent.insert("id".into(), json!("agent-0"));
    for k in [
        "name",
        "system",
        "agent_type",
        "description",
        "tags",
        "llm_config",
        "tool_rules",
        "tool_exec_environment_variables",
    ] {
        if let Some(v) = doc.get(k) {
            agent.insert(k.into(), v.clone());
        }
    }
    let messages: Vec<Value> = doc
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, m)| {
            let mut m = m.clone();
            if m.get("id").and_then(Value::as_str).is_none() {
                m["id"] = json!(format!("message-{i}"));
            }
            m
        })
        .collect();
    let in_context: Vec<Value> = doc
        .get("in_context_message_indices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .filter_map(|i| messages.get(i as usize)?.get("id").cloned())
        .collect();
    agent.insert("messages".into(), json!(messages));
    agent.insert("in_context_message_ids".into(), json!(in_context));
    agent.insert(
        "memory_blocks".into(),
        doc.get("core_memory").cloned().unwrap_or(json!([])),
    );
    let groups = match doc.get("multi_agent_group") {
        Some(g) if g.is_object() => json!([g]),
        _ => json!([]),
    };
    json!({
        "agents": [agent],
        "blocks": [],
        "tools": doc.get("tools").cloned().unwrap_or(json!([])),
        "groups": groups,
        "created_at": doc.get("created_at").cloned().unwrap_or(Value::Null),
        "letta_version": doc.get("version").cloned().unwrap_or(Value::Null),
    })
}

/// Counts of what was not carried, by what it is, for the notes.
#[derive(Default)]
struct Left {
    counts: BTreeMap<&'static str, usize>,
}

impl Left {
    fn add(&mut self, what: &'static str, n: usize) {
        if n > 0 {
            *self.counts.entry(what).or_default() += n;
        }
    }
}

/// Why each part memory_ext does not import is left out, keyed as [`Left`] counts it.
const WHY: [(&str, &str); 12] = [
    ("tools", "tools not imported: a Letta tool is code Letta's server runs; memory_ext agents use memory_tools() (docs/api.md \"Agent tools\")"),
    ("tool_rules", "tool rules not imported: memory_ext does not order an agent's tool calls"),
    ("mcp_servers", "MCP servers not imported: connect them to your agent runtime; memory_ext serves its own (memory-mcp)"),
    ("secrets", "tool environment variables and secrets not imported: they are credentials, not memory"),
    ("reasoning", "reasoning parts of assistant messages not imported: memory_ext keeps what was said and the tool calls, not a model's hidden reasoning or its signatures"),
    ("approvals", "approval responses folded into the tool results that follow them (a denied call's result says so)"),
    ("unanswered", "tool calls had no recorded result in the file: each got a tool message saying so, so the conversation stays a valid Chat Completions sequence"),
    ("orphans", "tool results answered no call in the file: left out"),
    ("roles", "messages of a role memory_ext has not (system, user, assistant, tool): left out"),
    ("system", "Letta's compiled system messages kept in the thread but out of context: memory_context compiles the agent's own prompt from its blocks"),
    ("files_agents", "open-file views not carried: the files are imported, and an agent reads them with the file tools"),
    ("envelopes", "user messages unpacked from Letta's JSON envelope ({\"type\": \"user_message\", \"message\": ...}) to their text"),
];

/// A Letta agent file's agents, blocks, messages, files and archival passages in memory_export's
/// shape. An agent's id here is its name; its conversation is one thread of the same id.
pub fn from_letta(doc: &Value, enc: Encoding) -> Result<Converted, String> {
    let v2;
    let mut notes = vec![];
    let doc = if is_v1(doc) {
        v2 = v1_as_v2(doc);
        notes.push(format!(
            "a Letta agent file of the first version ({}): read as such",
            doc.get("version")
                .and_then(Value::as_str)
                .map_or("no version".to_string(), |v| format!("Letta {v}"))
        ));
        &v2
    } else {
        doc
    };
    let agents = doc.get("agents").and_then(Value::as_array).ok_or(
        "a Letta agent file has an \"agents\" list (Letta 0.11 and later) or, in the first version (Letta 0.6-0.10), \"core_memory\" and \"messages\" at the top level",
    )?;
    // The file's own ids ("agent-0", "block-0") repeat across files: the rows' ids are made of
    // the file's creation time and them, so one file always imports to the same rows.
    let seed = doc
        .get("created_at")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let list = |k: &str| -> Vec<Value> {
        doc.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let blocks = list("blocks");
    let blocks_by_id: BTreeMap<&str, &Value> = blocks
        .iter()
        .filter_map(|b| b.get("id").and_then(Value::as_str).map(|id| (id, b)))
        .collect();
    let mut left = Left::default();
    let mut out = Rows::default();
    let mut names = BTreeSet::new();
    let mut agent_names = BTreeMap::new();
    let mut block_users: BTreeMap<String, usize> = BTreeMap::new();
    // A block several agents share: the first agent that has it holds it, the others attach it
    // (block_attach), so that it stays one block with one history, as in Letta.
    let mut first_owner: BTreeMap<String, String> = BTreeMap::new();
    for (ai, a) in agents.iter().enumerate() {
        let file_id = a.get("id").and_then(Value::as_str).unwrap_or("agent");
        let mut name = text_of(a.get("name")).unwrap_or_else(|| format!("letta-agent-{ai}"));
        if !names.insert(name.clone()) {
            name = format!("{name}-{ai}");
            names.insert(name.clone());
        }
        agent_names.insert(file_id.to_string(), name.clone());
        for id in a
            .get("block_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            *block_users.entry(id.to_string()).or_default() += 1;
        }
        let (rows, labels, attached) =
            agent_blocks(a, &blocks_by_id, &seed, file_id, &name, &mut first_owner);
        out.attachments.extend(attached);
        let mut meta = agent_metadata(a);
        if !labels.is_empty() {
            notes.push(format!(
                "agent {name}: {} block labels are paths, which a prompt's tags cannot hold: stored as {} (each block's description starts with its Letta label; the agent's metadata.letta_labels maps them back)",
                labels.len(),
                labels.iter().map(|(new, old)| format!("\"{old}\" as \"{new}\"")).collect::<Vec<_>>().join(", ")
            ));
            meta.insert("letta_labels".into(), json!(labels));
        }
        out.blocks.extend(rows);
        out.agents
            .push(json!({ "agent_id": name, "metadata": meta }));
        let (messages, seq) = agent_messages(a, enc, &seed, file_id, &name, &mut left);
        out.messages.extend(messages);
        out.threads
            .push(json!({ "thread_id": name, "agent_id": name, "last_seq": seq, "revision": 0 }));
        out.memories
            .extend(agent_passages(a, &seed, file_id, &name));
        let secrets = ["tool_exec_environment_variables", "secrets"]
            .iter()
            .map(|k| match a.get(*k) {
                Some(Value::Array(v)) => v.len(),
                Some(Value::Object(o)) => o.len(),
                _ => 0,
            })
            .sum();
        left.add("secrets", secrets);
        left.add(
            "tool_rules",
            a.get("tool_rules")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
        );
        left.add(
            "files_agents",
            a.get("files_agents")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
        );
        if a.get("agent_type").and_then(Value::as_str) == Some("sleeptime_agent") {
            notes.push(format!(
                "agent {name} is a Letta sleep-time agent: imported as an ordinary agent with its blocks and messages; in memory_ext the worker does that work (consolidation, extraction: docs/design.md)"
            ));
        }
    }
    // Blocks no agent has (a memory filesystem's detached pages): memory files, found by recall
    // and the file tools, rather than in every prompt.
    let unused: Vec<&Value> = blocks_by_id
        .iter()
        .filter(|(id, _)| !block_users.contains_key(**id))
        .map(|(_, b)| *b)
        .collect();
    if !unused.is_empty() {
        notes.push(format!(
            "{} blocks no agent of the file uses: imported as memory files under letta/blocks/ (a memory_ext block belongs to an agent and is in its every prompt)",
            unused.len()
        ));
    }
    let shared = block_users.values().filter(|n| **n > 1).count();
    if shared > 0 {
        notes.push(format!(
            "{shared} blocks were shared by several agents: each is one block, held by the first agent that has it and attached to the others (block_attach: one edit is seen by all)"
        ));
    }
    for g in list("groups") {
        let kind = g
            .get("manager_config")
            .and_then(|m| m.get("manager_type"))
            .and_then(Value::as_str)
            .or_else(|| g.get("manager_type").and_then(Value::as_str))
            .unwrap_or("round_robin");
        let members: Vec<String> = g
            .get("agent_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|id| {
                agent_names
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| id.to_string())
            })
            .collect();
        notes.push(format!(
            "group {} ({kind}, agents {}) not carried: memory_ext has no agent groups; its agents are imported one by one, and a sleep-time group's work is the worker's",
            g.get("id").and_then(Value::as_str).unwrap_or("?"),
            if members.is_empty() { "none".into() } else { members.join(", ") }
        ));
    }
    let (files, file_notes) = files(doc, &seed, &unused);
    out.files = files;
    notes.extend(file_notes);
    left.add("tools", list("tools").len());
    left.add("mcp_servers", list("mcp_servers").len());
    for (what, why) in WHY {
        if let Some(n) = left.counts.get(what) {
            notes.push(format!("{n} {why}"));
        }
    }
    for rows in [
        &mut out.blocks,
        &mut out.messages,
        &mut out.memories,
        &mut out.files,
    ] {
        uniform(rows);
    }
    let mut document = json!({
        "agents": out.agents,
        "blocks": out.blocks,
        "threads": out.threads,
        "messages": out.messages,
        "memories": out.memories,
    });
    if !out.files.is_empty() {
        document["files"] = json!(out.files);
    }
    if !out.attachments.is_empty() {
        document["block_attachments"] = json!(out.attachments);
    }
    Ok(Converted {
        document,
        notes,
        ids: Map::new(),
    })
}

#[derive(Default)]
struct Rows {
    agents: Vec<Value>,
    blocks: Vec<Value>,
    attachments: Vec<Value>,
    threads: Vec<Value>,
    messages: Vec<Value>,
    memories: Vec<Value>,
    files: Vec<Value>,
}

/// An agent's metadata row: its description, system prompt, type, tags, model and timezone,
/// and where it came from.
fn agent_metadata(a: &Value) -> Map<String, Value> {
    let mut meta = Map::new();
    for k in [
        "description",
        "system",
        "agent_type",
        "tags",
        "model",
        "timezone",
    ] {
        if let Some(v) = a.get(k).filter(|v| !v.is_null()) {
            meta.insert(k.to_string(), v.clone());
        }
    }
    // Letta names a model by its handle ("anthropic/claude-..."), which its import needs back.
    if let Some(l) = a.get("llm_config").and_then(|l| {
        l.get("handle")
            .filter(|h| h.is_string())
            .or_else(|| l.get("model"))
    }) {
        meta.insert("model".into(), l.clone());
    }
    meta.insert("source".into(), json!("letta_af"));
    meta
}

/// A Letta block label as a memory_ext label: the same when it is one; otherwise (a memory
/// filesystem path such as `system/human/family`, `/note_directory`) its segments joined with
/// `__`, other characters as `_`, unique among the agent's labels.
///
/// # Why
/// A label is the tag a block is rendered in (`<human>...</human>`, crate::render), so it
/// cannot hold `/`; 0.12.0 refused the whole file with a raw CheckViolation.
pub fn label_for(label: &str, taken: &BTreeSet<String>) -> String {
    if crate::blocks::check_label(label).is_ok() && !taken.contains(label) {
        return label.to_string();
    }
    let mut s: String = label
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("__");
    if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        s.insert(0, '_');
    }
    s.truncate(crate::blocks::MAX_LABEL_CHARS - 4);
    if crate::blocks::check_label(&s).is_err() {
        s.push_str("_af");
    }
    let base = s.clone();
    let mut n = 2;
    while taken.contains(&s) {
        s = format!("{base}-{n}");
        n += 1;
    }
    s
}

/// Core memory: the agent's blocks, by id from the file's shared blocks and inline, each label
/// once. Returns the rows and the labels that had to change (new label to Letta's).
fn agent_blocks(
    a: &Value,
    blocks_by_id: &BTreeMap<&str, &Value>,
    seed: &str,
    file_id: &str,
    name: &str,
    first_owner: &mut BTreeMap<String, String>,
) -> (Vec<Value>, BTreeMap<String, String>, Vec<Value>) {
    let mut rows = vec![];
    let mut attached = vec![];
    let mut taken = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut changed = BTreeMap::new();
    let block_ids: Vec<&str> = a
        .get("block_ids")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let inline: Vec<&Value> = a
        .get("memory_blocks")
        .and_then(Value::as_array)
        .map(|b| b.iter().collect())
        .unwrap_or_default();
    for b in block_ids
        .iter()
        .filter_map(|id| blocks_by_id.get(id).copied())
        .chain(inline)
    {
        let Some(original) = text_of(b.get("label")) else {
            continue;
        };
        if !seen.insert(original.clone()) {
            continue;
        }
        let block_key = b.get("id").and_then(Value::as_str).unwrap_or(&original);
        let row_id = format!("letta:{seed}:{file_id}:{block_key}");
        // Held by an earlier agent of the file: attached here (the owner is the importing
        // tenant, filled in by memory._import_row).
        if b.get("id").and_then(Value::as_str).is_some() {
            if let Some(held) = first_owner.get(block_key) {
                taken.insert(original.clone());
                attached.push(json!({ "agent_id": name, "block_id": held, "read_only": false }));
                continue;
            }
            first_owner.insert(block_key.to_string(), row_id.clone());
        }
        let label = label_for(&original, &taken);
        taken.insert(label.clone());
        let mut description = b
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        if label != original {
            description = Some(match description {
                Some(d) if !d.trim().is_empty() => format!("Letta label \"{original}\". {d}"),
                _ => format!("Letta label \"{original}\"."),
            });
            changed.insert(label.clone(), original.clone());
        }
        let value = b.get("value").and_then(Value::as_str).unwrap_or("");
        let limit = b
            .get("limit")
            .and_then(Value::as_i64)
            .unwrap_or(20_000)
            .clamp(1, 1_000_000)
            .max(value.chars().count() as i64);
        rows.push(json!({
            "id": row_id,
            "agent_id": name,
            "label": label,
            "value": value,
            "char_limit": limit,
            "read_only": b.get("read_only").and_then(Value::as_bool).unwrap_or(false),
            "description": description,
        }));
    }
    (rows, changed, attached)
}

/// A message's parts: its text (text parts joined; content is a string in some files) and how
/// many reasoning parts it had.
fn parts(m: &Value) -> (String, usize) {
    match m.get("content") {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(parts)) => {
            let text = parts
                .iter()
                .filter(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_none_or(|t| t == "text")
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n");
            let reasoning = parts
                .iter()
                .filter(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.contains("reasoning"))
                })
                .count();
            (text, reasoning)
        }
        _ => (
            m.get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            0,
        ),
    }
}

/// A user message's text out of Letta's envelope (`{"type": "user_message", "message": ...}`,
/// what Letta 0.6-0.10 stored), or `None` when it is not one.
fn unpacked(text: &str) -> Option<String> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let v: Value = serde_json::from_str(text).ok()?;
    if v.get("type").and_then(Value::as_str) != Some("user_message") {
        return None;
    }
    v.get("message").and_then(Value::as_str).map(str::to_string)
}

/// A tool return's output as the tool message's content: its `func_response`, else its stdout
/// and stderr.
fn return_text(r: &Value) -> String {
    match r.get("func_response") {
        Some(Value::String(s)) => return s.clone(),
        Some(v) if !v.is_null() => return v.to_string(),
        _ => {}
    }
    let out: Vec<String> = ["stdout", "stderr"]
        .iter()
        .filter_map(|k| match r.get(*k) {
            Some(Value::Array(a)) => Some(
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        })
        .filter(|s| !s.is_empty())
        .collect();
    if out.is_empty() {
        json!({"status": r.get("status").and_then(Value::as_str).unwrap_or("unknown")}).to_string()
    } else {
        out.join("\n")
    }
}

/// One message of the converted conversation, before it is numbered.
struct Msg {
    role: &'static str,
    content: String,
    tool_calls: Option<Value>,
    tool_call_id: Option<String>,
    name: Option<String>,
    letta_id: String,
    created_at: Option<Value>,
    in_context: bool,
}

fn call_ids(calls: &Option<Value>) -> Vec<String> {
    calls
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Recall: the agent's conversation, in order, as the thread named after the agent, shaped so
/// that every tool message follows the assistant message that called it and answers one call
/// (Chat Completions refuses anything else):
///
/// - an approval request (role `approval` with `tool_calls`) is the assistant's call;
/// - an approval response (role `approval` with `approvals`) is the user's decision: it is not
///   a message of its own, and its returns answer calls the file has no tool message for;
/// - a tool message with `tool_returns` becomes one tool message per return (Letta keeps
///   parallel calls' results in one message);
/// - a call with no result gets one saying so; a result for no call is left out.
///
/// A call and its results are in context together, as the calling message is. Returns the rows
/// and the last seq.
fn agent_messages(
    a: &Value,
    enc: Encoding,
    seed: &str,
    file_id: &str,
    name: &str,
    left: &mut Left,
) -> (Vec<Value>, i64) {
    // No list: every message is in context; a list, even an empty one, says which are.
    let in_context_ids: Option<BTreeSet<&str>> = a
        .get("in_context_message_ids")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).collect());
    let messages = a
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // Results the approval responses carry, by call id: used for a call no tool message answers.
    let mut approved: BTreeMap<String, String> = BTreeMap::new();
    let mut raw: Vec<Msg> = vec![];
    for m in &messages {
        let mid = m
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let in_context = in_context_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(mid.as_str()));
        let created_at = m.get("created_at").filter(|t| t.is_string()).cloned();
        let (text, reasoning) = parts(m);
        left.add("reasoning", reasoning);
        let tool_calls = m
            .get("tool_calls")
            .filter(|t| t.as_array().is_some_and(|a| !a.is_empty()))
            .cloned();
        let msg =
            |role: &'static str, content: String, calls: Option<Value>, call: Option<String>| Msg {
                role,
                content,
                tool_calls: calls,
                tool_call_id: call,
                name: m.get("name").and_then(Value::as_str).map(str::to_string),
                letta_id: mid.clone(),
                created_at: created_at.clone(),
                in_context,
            };
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" => {
                left.add("system", 1);
                let mut s = msg("system", text, None, None);
                s.in_context = false;
                raw.push(s);
            }
            "user" => {
                let content = match unpacked(&text) {
                    Some(t) => {
                        left.add("envelopes", 1);
                        t
                    }
                    None => text,
                };
                raw.push(msg("user", content, None, None));
            }
            "assistant" => raw.push(msg("assistant", text, tool_calls, None)),
            "approval" => {
                let approvals = m
                    .get("approvals")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if tool_calls.is_some() {
                    raw.push(msg("assistant", text, tool_calls, None));
                } else {
                    left.add("approvals", 1);
                }
                for r in approvals {
                    let Some(id) = r.get("tool_call_id").and_then(Value::as_str) else {
                        continue;
                    };
                    let out = if r.get("approve") == Some(&json!(false)) {
                        json!({"status": "Failed", "message": format!("request to call tool denied. User reason: {}", r.get("reason").and_then(Value::as_str).unwrap_or(""))}).to_string()
                    } else {
                        return_text(&r)
                    };
                    approved.entry(id.to_string()).or_insert(out);
                }
            }
            "tool" => {
                let returns = m
                    .get("tool_returns")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if returns.is_empty() {
                    let call = m
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    raw.push(msg("tool", text, None, call));
                } else {
                    for r in &returns {
                        let call = r
                            .get("tool_call_id")
                            .or_else(|| m.get("tool_call_id"))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        raw.push(msg("tool", return_text(r), None, call));
                    }
                }
            }
            _ => left.add("roles", 1),
        }
    }
    // Every call answered right after it, every answer after its call.
    let mut seqd: Vec<Msg> = vec![];
    let mut pending: Vec<String> = vec![];
    let mut caller_in_context = true;
    let answer = |id: &str,
                  in_context: bool,
                  approved: &BTreeMap<String, String>,
                  left: &mut Left| {
        let content = match approved.get(id) {
            Some(r) => r.clone(),
            None => {
                left.add("unanswered", 1);
                json!({"status": "unknown", "message": "no result was recorded for this call in the Letta agent file (it was waiting for approval, or the file was cut there)"}).to_string()
            }
        };
        Msg {
            role: "tool",
            content,
            tool_calls: None,
            tool_call_id: Some(id.to_string()),
            name: None,
            letta_id: String::new(),
            created_at: None,
            in_context,
        }
    };
    // Letta recompiles its system message when memory changes, between a call and its result:
    // such a message (out of context) waits until the call is answered.
    let mut waiting: Vec<Msg> = vec![];
    for mut m in raw {
        if m.role == "system" && !pending.is_empty() {
            waiting.push(m);
            continue;
        }
        if m.role == "tool" {
            let id = m.tool_call_id.clone().unwrap_or_default();
            if let Some(i) = pending.iter().position(|p| *p == id) {
                pending.remove(i);
                m.in_context = caller_in_context;
                seqd.push(m);
            } else {
                left.add("orphans", 1);
            }
            continue;
        }
        for id in pending.drain(..) {
            seqd.push(answer(&id, caller_in_context, &approved, left));
        }
        seqd.append(&mut waiting);
        if m.role == "assistant" {
            pending = call_ids(&m.tool_calls);
            caller_in_context = m.in_context;
        }
        seqd.push(m);
    }
    for id in pending.drain(..) {
        seqd.push(answer(&id, caller_in_context, &approved, left));
    }
    seqd.append(&mut waiting);
    let mut rows = vec![];
    let mut seq = 0i64;
    for m in seqd {
        seq += 1;
        let calls_text = m.tool_calls.as_ref().map(Value::to_string);
        let tokens = tokens::message_tokens(
            enc,
            m.role,
            &m.content,
            m.name.as_deref(),
            calls_text.as_deref(),
        );
        rows.push(json!({
            "id": format!("letta:{seed}:{file_id}:{}:{seq}", m.letta_id),
            "thread_id": name,
            "seq": seq,
            "role": m.role,
            "content": m.content,
            "tool_calls": m.tool_calls,
            "tool_call_id": m.tool_call_id,
            "name": m.name,
            "token_count": tokens,
            "in_context": m.in_context,
            "is_summary": false,
            "created_at": m.created_at,
            "metadata": if m.letta_id.is_empty() { json!({"letta": "added"}) } else { json!({ "letta_id": m.letta_id }) },
        }));
    }
    (rows, seq)
}

/// Archival memory, when the file carries it (`passages`, or `archival_memory`).
fn agent_passages(a: &Value, seed: &str, file_id: &str, name: &str) -> Vec<Value> {
    let mut rows = vec![];
    for (pi, p) in a
        .get("passages")
        .or_else(|| a.get("archival_memory"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(text) = text_of(p.get("text")).or_else(|| text_of(Some(p))) else {
            continue;
        };
        let mut row = json!({
            "id": format!("letta:{seed}:{file_id}:passage:{}", p.get("id").and_then(Value::as_str).map_or(pi.to_string(), str::to_string)),
            "kind": "archival",
            "text": text,
            "agent_id": name,
            "state": "active",
            "tags": p.get("tags").filter(|t| t.is_array()).cloned().unwrap_or(json!([])),
            "metadata": { "source": "letta_af" },
        });
        if let Some(t) = p.get("created_at").filter(|t| t.is_string()) {
            row["created_at"] = t.clone();
            row["happened_at"] = t.clone();
        }
        rows.push(row);
    }
    rows
}

/// A string field that Letta wrote, or `None` for null and for the text "None" (some published
/// files have every field of a file as a Python string).
fn field<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && *s != "None")
}

/// The file's `files` (in their folders, Letta's `sources`) and `skills` as memory files:
/// `<folder>/<name>` and `skills/<skill>/<path>`. Returns the rows and the notes.
fn files(doc: &Value, seed: &str, unused_blocks: &[&Value]) -> (Vec<Value>, Vec<String>) {
    let mut rows = vec![];
    let mut notes = vec![];
    let folders: BTreeMap<&str, &str> = doc
        .get("sources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| Some((field(s, "id")?, field(s, "name")?)))
        .collect();
    let mut paths = BTreeSet::new();
    let mut skipped = vec![];
    let mut push = |path: String,
                    content: Option<&str>,
                    title: Option<&str>,
                    meta: Value,
                    rows: &mut Vec<Value>| {
        let Some(content) = content else {
            skipped.push(format!("{path} (no content in the file)"));
            return;
        };
        match crate::files::path(Some(&path)) {
            Ok(clean) if paths.insert(clean.clone()) => rows.push(json!({
                "id": format!("letta:{seed}:file:{clean}"),
                "path": clean,
                "title": title.map(|t| t.chars().take(255).collect::<String>()),
                "content": content,
                "metadata": meta,
            })),
            Ok(clean) => skipped.push(format!("{clean} (a second file of that path)")),
            Err(e) => skipped.push(format!("{} ({e})", crate::names::shown(&path))),
        }
    };
    let mut n_files = 0;
    let mut unnamed = 0;
    for f in doc
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(file_name) = field(f, "file_name").or_else(|| field(f, "original_file_name"))
        else {
            unnamed += 1;
            continue;
        };
        let folder = field(f, "source_id").and_then(|s| folders.get(s).copied());
        let path = match folder {
            Some(folder) if !file_name.starts_with(&format!("{folder}/")) => {
                format!("{folder}/{file_name}")
            }
            _ => file_name.to_string(),
        };
        n_files += 1;
        push(
            path,
            field(f, "content"),
            field(f, "original_file_name"),
            json!({"source": "letta_af", "letta_folder": folder, "file_type": field(f, "file_type"), "letta_id": field(f, "id")}),
            &mut rows,
        );
    }
    for b in unused_blocks {
        let Some(label) = field(b, "label") else {
            continue;
        };
        push(
            format!(
                "letta/blocks/{}.md",
                label
                    .split('/')
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join("/")
            ),
            b.get("value").and_then(Value::as_str),
            field(b, "description"),
            json!({"source": "letta_af", "letta_block": field(b, "id"), "letta_label": label, "limit": b.get("limit")}),
            &mut rows,
        );
    }
    let mut n_skills = 0;
    for s in doc
        .get("skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(skill) = field(s, "name") else {
            continue;
        };
        n_skills += 1;
        for (p, content) in s
            .get("files")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            push(
                format!("skills/{skill}/{p}"),
                content.as_str(),
                None,
                json!({"source": "letta_af", "letta_skill": skill, "source_url": field(s, "source_url")}),
                &mut rows,
            );
        }
    }
    if n_files > 0 {
        notes.push(format!(
            "{n_files} files in {} folders imported as memory files under their folder's name",
            folders.len()
        ));
    }
    if n_skills > 0 {
        notes.push(format!(
            "{n_skills} skills imported as memory files under skills/<name>/ (an agent reads them with the file tools; memory_ext does not run them)"
        ));
    }
    if unnamed > 0 {
        skipped.push(format!("{unnamed} with no name"));
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "{} files not imported: {}",
            skipped.len(),
            skipped.join("; ")
        ));
    }
    (rows, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(c: &Converted) -> Vec<String> {
        c.document["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let r = m["role"].as_str().unwrap().to_string();
                match m["tool_call_id"].as_str() {
                    Some(id) => format!("{r}:{id}"),
                    None => r,
                }
            })
            .collect()
    }

    #[test]
    fn a_v2_agent_becomes_an_agent_its_blocks_and_one_thread() {
        let doc = json!({
            "agents": [{"id": "agent-0", "name": "memgpt_agent", "block_ids": ["block-0", "block-1"], "system": "You are...",
                        "in_context_message_ids": ["message-0", "message-1", "message-2"],
                        "messages": [
                            {"id": "message-0", "role": "system", "content": [{"type": "text", "text": "You are..."}], "created_at": "2025-04-01T00:00:00+00:00"},
                            {"id": "message-1", "role": "assistant", "content": [], "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "send_message", "arguments": "{}"}}]},
                            {"id": "message-2", "role": "tool", "content": [{"type": "text", "text": "{\"status\": \"OK\"}"}], "tool_call_id": "c1"}
                        ]}],
            "blocks": [{"id": "block-0", "label": "human", "value": "First name: Chad", "limit": 5000, "read_only": false, "description": "The human block"},
                       {"id": "block-1", "label": "system/human/family", "value": "Two kids", "limit": 100}],
            "tools": [{"id": "tool-0"}], "groups": [], "created_at": "2026-02-12T19:12:25+00:00"
        });
        let c = from_letta(&doc, Encoding::Cl100kBase).unwrap();
        let d = &c.document;
        assert_eq!(d["agents"][0]["agent_id"], json!("memgpt_agent"));
        assert_eq!(d["blocks"][0]["label"], json!("human"));
        assert_eq!(d["blocks"][0]["char_limit"], json!(5000));
        assert_eq!(d["blocks"][1]["label"], json!("system__human__family"));
        assert_eq!(
            d["blocks"][1]["description"],
            json!("Letta label \"system/human/family\".")
        );
        assert_eq!(
            d["agents"][0]["metadata"]["letta_labels"]["system__human__family"],
            json!("system/human/family")
        );
        assert_eq!(d["threads"][0]["last_seq"], json!(3));
        let msgs = d["messages"].as_array().unwrap();
        assert_eq!(msgs[2]["tool_call_id"], json!("c1"));
        assert_eq!(
            msgs[0]["in_context"],
            json!(false),
            "Letta's system message"
        );
        assert_eq!(msgs[2]["in_context"], json!(true));
        assert!(msgs[0]["token_count"].as_u64().unwrap() > 0);
        assert!(c
            .notes
            .iter()
            .any(|n| n.starts_with("1 tools not imported")));
        assert_eq!(check(&c), Ok(()));
    }

    fn check(c: &Converted) -> Result<(), String> {
        super::super::check_rows(&c.document)
    }

    #[test]
    fn approvals_and_parallel_returns_become_answered_calls() {
        let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": "Bash", "arguments": "{}"}});
        let ret = |id: &str, out: &str| json!({"tool_call_id": id, "status": "success", "func_response": out});
        let doc = json!({"agents": [{"id": "agent-0", "name": "a", "messages": [
            {"id": "m1", "role": "user", "content": [{"type": "text", "text": "run three"}]},
            {"id": "m2", "role": "approval", "content": [{"type": "reasoning", "reasoning": "hm"}], "tool_calls": [call("t1"), call("t2"), call("t3")]},
            {"id": "m3", "role": "approval", "approvals": [ret("t1", "one"), ret("t2", "two"), ret("t3", "three")]},
            {"id": "m4", "role": "tool", "tool_call_id": "t1", "tool_returns": [ret("t1", "one"), ret("t2", "two")]},
            {"id": "m5", "role": "approval", "tool_calls": [call("t4")]},
            {"id": "m6", "role": "approval", "approvals": [{"type": "approval", "tool_call_id": "t4", "approve": false, "reason": "stop"}]},
            {"id": "m7", "role": "tool", "tool_call_id": "zz", "content": "stray"},
            {"id": "m8", "role": "assistant", "content": [{"type": "text", "text": "done"}]}
        ]}], "blocks": [], "tools": [], "groups": []});
        let c = from_letta(&doc, Encoding::Cl100kBase).unwrap();
        assert_eq!(
            roles(&c),
            [
                "user",
                "assistant",
                "tool:t1",
                "tool:t2",
                "tool:t3",
                "assistant",
                "tool:t4",
                "assistant"
            ]
        );
        let msgs = c.document["messages"].as_array().unwrap();
        assert_eq!(
            msgs[4]["content"],
            json!("three"),
            "from the approval response"
        );
        assert!(msgs[6]["content"].as_str().unwrap().contains("denied"));
        let notes = c.notes.join("\n");
        assert!(notes.contains("1 reasoning parts"), "{notes}");
        assert!(notes.contains("2 approval responses"), "{notes}");
        assert!(notes.contains("1 tool results answered no call"), "{notes}");
        assert_eq!(check(&c), Ok(()));
    }

    #[test]
    fn a_first_version_file_is_read_as_such() {
        let doc = json!({
            "version": "0.6.47", "name": "bob", "agent_type": "memgpt_agent", "system": "sys",
            "core_memory": [{"label": "persona", "value": "I am Bob", "limit": 5000}],
            "in_context_message_indices": [1, 2, 3],
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "sys"}]},
                {"role": "user", "content": [{"type": "text", "text": "{\"type\": \"user_message\", \"message\": \"hi, I am Sarah\", \"time\": \"x\"}"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "thinking"}], "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "send_message", "arguments": "{}"}}]},
                {"role": "tool", "content": [{"type": "text", "text": "{\"status\": \"OK\"}"}], "tool_call_id": "c1"}
            ],
            "tools": [{"name": "send_message"}], "tool_rules": [{"tool_name": "send_message", "type": "exit_loop"}],
            "multi_agent_group": null, "created_at": "2025-04-01T03:47:27"
        });
        assert!(is_v1(&doc));
        let c = from_letta(&doc, Encoding::Cl100kBase).unwrap();
        assert_eq!(c.document["blocks"][0]["label"], json!("persona"));
        assert_eq!(roles(&c), ["system", "user", "assistant", "tool:c1"]);
        assert_eq!(
            c.document["messages"][1]["content"],
            json!("hi, I am Sarah")
        );
        assert_eq!(c.document["messages"][1]["in_context"], json!(true));
        assert!(c.notes[0].contains("first version (Letta 0.6.47)"));
        assert!(c.notes.iter().any(|n| n.starts_with("1 tool rules")));
    }

    #[test]
    fn labels_that_are_paths_get_a_label_and_keep_theirs() {
        let mut taken = BTreeSet::new();
        for (l, want) in [
            ("human", "human"),
            ("/note_directory", "note_directory"),
            ("corrections/ezra-mistakes", "corrections__ezra-mistakes"),
            ("reference/api endpoints.md", "reference__api_endpoints_md"),
            ("9lives", "_9lives"),
            ("memory_blocks", "memory_blocks_af"),
            ("note_directory", "note_directory-2"),
        ] {
            let got = label_for(l, &taken);
            assert_eq!(got, want, "{l}");
            assert!(crate::blocks::check_label(&got).is_ok(), "{got}");
            taken.insert(got);
        }
    }

    #[test]
    fn files_and_skills_become_memory_files_in_their_folders() {
        let doc = json!({"agents": [], "tools": [], "groups": [],
            "blocks": [{"id": "block-9", "label": "reference/api", "value": "GET /v1", "description": "API notes"}],
            "sources": [{"id": "source-0", "name": "docs"}],
            "files": [{"id": "file-0", "source_id": "source-0", "file_name": "docs/a.md", "original_file_name": "a.md", "content": "A"},
                      {"id": "file-1", "source_id": "source-0", "file_name": "b.txt", "content": "B"},
                      {"id": "file-2", "source_id": "source-0", "file_name": "c.txt", "content": "None"},
                      {"id": "file-3", "source_id": "source-0", "file_name": "../x", "content": "X"}],
            "skills": [{"name": "pdf", "files": {"SKILL.md": "how"}}]});
        let c = from_letta(&doc, Encoding::Cl100kBase).unwrap();
        let paths: Vec<&str> = c.document["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "docs/a.md",
                "docs/b.txt",
                "letta/blocks/reference/api.md",
                "skills/pdf/SKILL.md"
            ]
        );
        assert!(c.notes[0].starts_with("1 blocks no agent of the file uses"));
        let notes = c.notes.join("\n");
        assert!(
            notes.contains("2 files not imported: docs/c.txt (no content"),
            "{notes}"
        );
        assert_eq!(check(&c), Ok(()));
    }
}
