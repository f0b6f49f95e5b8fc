//! Import (docs/api.md "Import"): memory_import's options, and the converters that turn the
//! documents of the systems users come from into memory_export's own shape, which
//! sql/import.sql inserts.
//!
//! - mem0: what `Memory.get_all()` / the platform's `get_all` return, `{"results": [...]}` or the
//!   bare list: each memory's `id`, `memory`, `hash`, `metadata`, `categories`, `created_at`,
//!   `updated_at`, `user_id`, `agent_id`, `run_id`, `actor_id`, `role` (mem0/memory/main.py,
//!   mem0/client/main.py).
//! - Letta's agent file (`.af`, github.com/letta-ai/agent-file): `agents` (each with its
//!   `block_ids`, `messages`, `in_context_message_ids`, `system`), the shared `blocks` (label,
//!   value, limit, read_only, description), `tools` (not imported: a tool is code). An agent's
//!   archival `passages`, which older agent files carried, become archival memories.
//!
//! Ids that are not UUIDs (Letta's "agent-0", "message-3") are kept as text here; sql/import.sql
//! turns each into a UUID derived from it, so the same document imports to the same rows.

use crate::tokens::{self, Encoding};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Every row of a memory_export document, checked as the write path of its kind checks what
/// it writes (memory_import inserts the rows as a restore would, past the write-side checks):
/// ids, categories, block labels and values, memory texts, file paths, message roles, store
/// namespaces, keys and values, entity names, checkpoint keys. The first row that fails, named
/// `section[i]` with the reason, or `Ok`.
///
/// # Why
/// 0.12.0 took newline categories, reserved block labels, a 100,000-character semantic memory,
/// a path `../../etc/passwd` and a thread id with a control character from an import, and only
/// the renderers stood between them and a prompt.
pub fn check_rows(doc: &Value) -> Result<(), String> {
    let Some(doc) = doc.as_object() else {
        return Ok(());
    };
    for (section, rows) in doc {
        let Some(rows) = rows.as_array() else {
            continue;
        };
        for (i, r) in rows.iter().enumerate() {
            check_row(section, r).map_err(|why| format!("{section}[{i}]: {why}"))?;
        }
    }
    Ok(())
}

/// One row of `section`, by the rules of the write path that section's rows come from.
fn check_row(section: &str, r: &Value) -> Result<(), String> {
    match section {
        "agents" => id(r, "agent_id", true),
        "threads" => {
            id(r, "thread_id", true)?;
            id(r, "agent_id", false)
        }
        "blocks" => check_block(r),
        "memories" | "proposals" => check_memory(r),
        "messages" => {
            id(r, "thread_id", true)?;
            crate::validate::role(r.get("role").and_then(Value::as_str))
                .map_err(|e| e.to_string())?;
            id(r, "tool_call_id", false)?;
            id(r, "name", false)
        }
        "files" => {
            let path = string(r, "path").ok_or("path must be a string")?;
            let clean = crate::files::path(Some(&path)).map_err(|e| e.to_string())?;
            if clean != path {
                return Err("path is not written as stored (in NFC)".into());
            }
            Ok(())
        }
        "details" | "checkpoints" => id(r, "thread_id", section == "checkpoints"),
        "categories" | "allowlists" => check_category(section, r),
        "store_items" | "store_vectors" => check_store(section, r),
        "checkpoint_steps" | "checkpoint_blobs" | "checkpoint_writes" => {
            id(r, "thread_id", true)?;
            key(r, "checkpoint_ns", true)?;
            key(r, "checkpoint_id", false)?;
            key(r, "parent_checkpoint_id", true)?;
            key(r, "task_id", true)?;
            key(r, "task_path", true)
        }
        "entities" => check_entity(r),
        "entity_relations" => check_relation(r),
        _ => Ok(()),
    }
}

/// Field `f` of `r` as an id (validate::id); absent is fine unless `required`.
fn id(r: &Value, f: &'static str, required: bool) -> Result<(), String> {
    match r.get(f) {
        None | Some(Value::Null) if !required => Ok(()),
        Some(Value::String(s)) => crate::validate::id(f, Some(s))
            .map(|_| ())
            .map_err(|e| e.to_string()),
        _ => Err(format!("{f} must be a string")),
    }
}

fn string(r: &Value, f: &'static str) -> Option<String> {
    r.get(f).and_then(Value::as_str).map(str::to_string)
}

/// Field `f` of `r` as a checkpoint key: legible, at most 200 characters, empty only when
/// `may_be_empty`.
fn key(r: &Value, f: &'static str, may_be_empty: bool) -> Result<(), String> {
    match r.get(f) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) if s.is_empty() && may_be_empty => Ok(()),
        Some(Value::String(s)) if s.is_empty() => Err(format!("{f} must not be empty")),
        Some(Value::String(s)) if s.chars().count() > 200 => {
            Err(format!("{f} is longer than 200 characters"))
        }
        Some(Value::String(s)) => crate::names::legible(s).map_err(|why| format!("{f} {why}")),
        _ => Err(format!("{f} must be a string")),
    }
}

/// Category `c` (of field `f`) as it is stored, or why not.
fn stored_category(f: &str, c: &str) -> Result<(), String> {
    let n = crate::names::category(c).map_err(|e| e.to_string())?;
    if n != c {
        return Err(format!(
            "{f} \"{}\" is not written as stored (\"{n}\")",
            crate::names::shown(c)
        ));
    }
    Ok(())
}

fn check_block(r: &Value) -> Result<(), String> {
    id(r, "agent_id", true)?;
    let label = string(r, "label").ok_or("label must be a string")?;
    crate::blocks::check_label(&label).map_err(|e| e.to_string())?;
    let value = string(r, "value").unwrap_or_default();
    if let Some(limit) = r.get("char_limit").and_then(Value::as_i64) {
        let limit = crate::blocks::check_char_limit(limit).map_err(|e| e.to_string())?;
        crate::blocks::fits(&label, value, limit).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn check_memory(r: &Value) -> Result<(), String> {
    let kind = string(r, "kind").unwrap_or_else(|| "semantic".into());
    let text = string(r, "text").ok_or("text must be a string")?;
    crate::text::check(&kind, &text).map_err(|e| e.to_string())?;
    if let Some(c) = string(r, "category") {
        stored_category("category", &c)?;
    }
    for f in ["thread_id", "agent_id", "run_id", "actor_id"] {
        id(r, f, false)?;
    }
    Ok(())
}

fn check_category(section: &str, r: &Value) -> Result<(), String> {
    if section == "categories" {
        match r.get("context") {
            None | Some(Value::Null) => {}
            Some(Value::String(c)) if c == "all" || c == "rag" => {}
            _ => return Err("context must be \"all\" or \"rag\"".into()),
        }
        match r.get("rag_length") {
            None | Some(Value::Null) => {}
            Some(v)
                if v.as_i64()
                    .is_some_and(|n| (1..=i64::from(i32::MAX)).contains(&n)) => {}
            _ => return Err("rag_length must be a whole number of 1 or more".into()),
        }
        if r.get("screen")
            .is_some_and(|v| !v.is_null() && !v.is_object())
        {
            return Err("screen must be a JSON object".into());
        }
    }
    let f = if section == "categories" {
        "name"
    } else {
        "category"
    };
    match string(r, f) {
        Some(c) => stored_category(f, &c),
        None => Ok(()),
    }
}

fn check_store(section: &str, r: &Value) -> Result<(), String> {
    let ns: Vec<Option<String>> = match r.get("namespace") {
        Some(Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_string)).collect(),
        _ => return Err("namespace must be an array of labels".into()),
    };
    crate::store::namespace(&ns).map_err(|e| e.to_string())?;
    crate::store::key(&string(r, "key").unwrap_or_default()).map_err(|e| e.to_string())?;
    if section == "store_items" {
        crate::store::value(r.get("value").unwrap_or(&Value::Null)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A relation is shown to agents (memory_entity): a short legible phrase, as the resolver
/// writes them ("brother of", "works at").
fn check_relation(r: &Value) -> Result<(), String> {
    let rel = string(r, "relation").ok_or("relation must be a string")?;
    if rel.trim().is_empty() || rel.chars().count() > 60 {
        return Err("relation must have 1 to 60 characters".into());
    }
    crate::names::legible(&rel)
        .map_err(|why| format!("relation \"{}\" {why}", crate::names::shown(&rel)))
}

fn check_entity(r: &Value) -> Result<(), String> {
    let name = string(r, "name").ok_or("name must be a string")?;
    let mut names = vec![name];
    if let Some(Value::Array(a)) = r.get("aliases") {
        names.extend(a.iter().filter_map(Value::as_str).map(str::to_string));
    }
    for n in names {
        if n.chars().count() > crate::entities::MAX_NAME_CHARS
            || crate::entities::norm(&n).is_empty()
        {
            return Err(format!(
                "name \"{}\" is not a name of 1 to {} characters",
                crate::names::shown(&n),
                crate::entities::MAX_NAME_CHARS
            ));
        }
        crate::names::legible(&n)
            .map_err(|why| format!("name \"{}\" {why}", crate::names::shown(&n)))?;
        if n.contains(['<', '>']) {
            return Err(format!(
                "name \"{}\" contains < or >",
                crate::names::shown(&n)
            ));
        }
    }
    Ok(())
}

/// The formats memory_import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    MemoryExt,
    Mem0,
    LettaAf,
}

/// memory_import's options: `{"format", "remap": {"user_id", "agent_ids", "thread_ids"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub format: Option<Format>,
    pub user_id: Option<String>,
    pub agent_ids: Map<String, Value>,
    pub thread_ids: Map<String, Value>,
}

fn ids(v: Option<&Value>, what: &str) -> Result<Map<String, Value>, String> {
    match v {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => {
            for (k, to) in m {
                match to.as_str() {
                    Some(s)
                        if !s.trim().is_empty()
                            && s.chars().count() <= crate::validate::MAX_ID_CHARS => {}
                    _ => return Err(format!("remap.{what}[\"{k}\"] must be a non-empty id")),
                }
            }
            Ok(m.clone())
        }
        Some(_) => Err(format!(
            "remap.{what} must be a JSON object of old id to new id"
        )),
    }
}

impl Options {
    pub fn parse(v: &Value) -> Result<Options, String> {
        let Value::Object(m) = v else {
            return Err("options must be a JSON object".into());
        };
        for k in m.keys() {
            if k != "format" && k != "remap" {
                return Err(format!("unknown option \"{k}\" (format, remap)"));
            }
        }
        let format = match m.get("format") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(match s.as_str() {
                "memory_ext" => Format::MemoryExt,
                "mem0" => Format::Mem0,
                "letta_af" => Format::LettaAf,
                other => {
                    return Err(format!(
                        "unknown format \"{other}\" (memory_ext, mem0, letta_af)"
                    ))
                }
            }),
            Some(_) => return Err("format must be a string".into()),
        };
        let remap = match m.get("remap") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(r)) => r.clone(),
            Some(_) => return Err("remap must be a JSON object".into()),
        };
        for k in remap.keys() {
            if !["user_id", "agent_ids", "thread_ids"].contains(&k.as_str()) {
                return Err(format!(
                    "unknown remap key \"{k}\" (user_id, agent_ids, thread_ids)"
                ));
            }
        }
        let user_id = match remap.get("user_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(_) => return Err("remap.user_id must be a non-empty string".into()),
        };
        Ok(Options {
            format,
            user_id,
            agent_ids: ids(remap.get("agent_ids"), "agent_ids")?,
            thread_ids: ids(remap.get("thread_ids"), "thread_ids")?,
        })
    }
}

/// The format of a document whose options do not say.
pub fn detect(doc: &Value) -> Result<Format, String> {
    let has = |k: &str| doc.get(k).is_some();
    if doc.is_array() || (has("results") && !has("memories")) {
        return Ok(Format::Mem0);
    }
    if has("agents") && has("blocks") && (has("tools") || has("groups")) {
        return Ok(Format::LettaAf);
    }
    if doc.is_object() {
        return Ok(Format::MemoryExt);
    }
    Err(
        "the document must be a JSON object (memory_export's, a Letta agent file) or a mem0 list"
            .into(),
    )
}

/// What a conversion made, and what it left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    pub document: Value,
    pub notes: Vec<String>,
}

fn text_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// mem0's memories as memory_export's `memories`.
pub fn from_mem0(doc: &Value) -> Result<Converted, String> {
    let list = match doc {
        Value::Array(a) => a,
        Value::Object(m) => match m.get("results") {
            Some(Value::Array(a)) => a,
            _ => {
                return Err("a mem0 document is {\"results\": [...]} or a list of memories".into())
            }
        },
        _ => return Err("a mem0 document is {\"results\": [...]} or a list of memories".into()),
    };
    let mut memories = vec![];
    let mut notes = vec![];
    for (i, m) in list.iter().enumerate() {
        let Some(text) = text_of(m.get("memory")).or_else(|| text_of(m.get("text"))) else {
            notes.push(format!("results[{i}] has no \"memory\" text: skipped"));
            continue;
        };
        let mut metadata = match m.get("metadata") {
            Some(Value::Object(o)) => o.clone(),
            _ => Map::new(),
        };
        if let Some(h) = m.get("hash").filter(|h| h.is_string()) {
            metadata.insert("mem0_hash".into(), h.clone());
        }
        let categories: Vec<String> = m
            .get("categories")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter_map(|c| crate::names::category(c).ok())
                    .collect()
            })
            .unwrap_or_default();
        let id = m
            .get("id")
            .and_then(Value::as_str)
            .map(|s| format!("mem0:{s}"))
            .unwrap_or_else(|| format!("mem0:{}", text));
        let mut row = json!({
            "id": id,
            "kind": "semantic",
            "text": text,
            "tags": categories,
            "metadata": metadata,
            "state": "active",
        });
        if let Some(c) = categories.first() {
            row["category"] = json!(c);
        }
        for k in ["agent_id", "run_id", "actor_id"] {
            if let Some(v) = text_of(m.get(k)) {
                row[k] = json!(v);
            }
        }
        if let Some(r) =
            text_of(m.get("role")).filter(|r| crate::validate::ROLES.contains(&r.as_str()))
        {
            row["role"] = json!(r);
        }
        if let Some(t) = m.get("created_at").filter(|t| t.is_string()) {
            row["created_at"] = t.clone();
            row["happened_at"] = t.clone();
        }
        if let Some(t) = m.get("updated_at").filter(|t| t.is_string()) {
            row["updated_at"] = t.clone();
        }
        memories.push(row);
    }
    // mem0 ids are UUIDs: keep them as they are.
    for r in &mut memories {
        if let Some(s) = r["id"].as_str().and_then(|s| s.strip_prefix("mem0:")) {
            if crate::request::is_uuid(s) {
                r["id"] = json!(s);
            }
        }
    }
    // Columns must be the same in every row of a section (sql/import.sql reads the document's).
    uniform(&mut memories);
    Ok(Converted {
        document: json!({ "memories": memories }),
        notes,
    })
}

/// Gives every row of a section the keys any of its rows has (null where missing): the importer
/// inserts the columns the section names.
fn uniform(rows: &mut [Value]) {
    let keys: std::collections::BTreeSet<String> = rows
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys().cloned())
        .collect();
    for r in rows.iter_mut() {
        if let Value::Object(o) = r {
            for k in &keys {
                o.entry(k.clone()).or_insert(Value::Null);
            }
        }
    }
}

/// A Letta message's text: its text parts joined (content is a list of parts, or a string in
/// older files).
fn letta_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => m
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    }
}

/// A Letta agent file's agents, their blocks, messages and archival passages in memory_export's
/// shape. An agent's id here is its name; its conversation is one thread of the same id.
pub fn from_letta(doc: &Value, enc: Encoding) -> Result<Converted, String> {
    let agents = doc
        .get("agents")
        .and_then(Value::as_array)
        .ok_or("a Letta agent file has an \"agents\" list")?;
    // The file's own ids ("agent-0", "block-0") repeat across files: the rows' ids are made of
    // the file's creation time and them, so one file always imports to the same rows.
    let seed = doc
        .get("created_at")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let blocks_by_id: BTreeMap<&str, &Value> = doc
        .get("blocks")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|b| b.get("id").and_then(Value::as_str).map(|id| (id, b)))
                .collect()
        })
        .unwrap_or_default();
    let mut out_agents = vec![];
    let mut out_blocks = vec![];
    let mut out_threads = vec![];
    let mut out_messages = vec![];
    let mut out_memories = vec![];
    let mut notes = vec![];
    let mut names = std::collections::BTreeSet::new();
    for (ai, a) in agents.iter().enumerate() {
        let file_id = a.get("id").and_then(Value::as_str).unwrap_or("agent");
        let mut name = text_of(a.get("name")).unwrap_or_else(|| format!("letta-agent-{ai}"));
        if !names.insert(name.clone()) {
            name = format!("{name}-{ai}");
            names.insert(name.clone());
        }
        let meta = letta_agent_metadata(a);
        out_agents.push(json!({ "agent_id": name, "metadata": meta }));
        out_blocks.extend(letta_blocks(a, &blocks_by_id, &seed, file_id, &name));
        let (messages, seq) = letta_messages(a, enc, &seed, file_id, &name, &mut notes);
        out_messages.extend(messages);
        out_threads
            .push(json!({ "thread_id": name, "agent_id": name, "last_seq": seq, "revision": 0 }));
        out_memories.extend(letta_passages(a, &seed, file_id, &name));
    }
    let tools = doc
        .get("tools")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if tools > 0 {
        notes.push(format!(
            "{tools} tools not imported: a Letta tool is code run by Letta's server; memory_ext agents use memory_tools() (docs/api.md \"Agent tools\")"
        ));
    }
    for rows in [&mut out_blocks, &mut out_messages, &mut out_memories] {
        uniform(rows);
    }
    Ok(Converted {
        document: json!({
            "agents": out_agents,
            "blocks": out_blocks,
            "threads": out_threads,
            "messages": out_messages,
            "memories": out_memories,
        }),
        notes,
    })
}

/// An agent's metadata row from a Letta agent file: its description, system prompt, type,
/// tags, model and timezone, and where it came from.
fn letta_agent_metadata(a: &Value) -> Map<String, Value> {
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
    if let Some(l) = a.get("llm_config").and_then(|l| l.get("model")) {
        meta.insert("model".into(), l.clone());
    }
    meta.insert("source".into(), json!("letta_af"));
    meta
}

/// Core memory: the agent's blocks, by id from the file's shared blocks and inline (a shared
/// block is copied to each agent that has it), each label once.
fn letta_blocks(
    a: &Value,
    blocks_by_id: &BTreeMap<&str, &Value>,
    seed: &str,
    file_id: &str,
    name: &str,
) -> Vec<Value> {
    let mut out_blocks = vec![];
    let mut labels = std::collections::BTreeSet::new();
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
        let Some(label) = text_of(b.get("label")) else {
            continue;
        };
        if !labels.insert(label.clone()) {
            continue;
        }
        let value = b.get("value").and_then(Value::as_str).unwrap_or("");
        let limit = b
            .get("limit")
            .and_then(Value::as_i64)
            .unwrap_or(20_000)
            .clamp(1, 1_000_000)
            .max(value.chars().count() as i64);
        out_blocks.push(json!({
            "id": format!("letta:{seed}:{file_id}:{}", b.get("id").and_then(Value::as_str).unwrap_or(&label)),
            "agent_id": name,
            "label": label,
            "value": value,
            "char_limit": limit,
            "read_only": b.get("read_only").and_then(Value::as_bool).unwrap_or(false),
            "description": b.get("description").and_then(Value::as_str),
        }));
    }
    out_blocks
}

/// Recall: the agent's one conversation, in order, as the thread named after the agent; a
/// message of a role memory_ext has not is left out with a note. Returns the rows and the last
/// seq.
fn letta_messages(
    a: &Value,
    enc: Encoding,
    seed: &str,
    file_id: &str,
    name: &str,
    notes: &mut Vec<String>,
) -> (Vec<Value>, i64) {
    let mut out_messages = vec![];
    let in_context: std::collections::BTreeSet<&str> = a
        .get("in_context_message_ids")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let messages = a
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut seq = 0i64;
    for m in &messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if !crate::validate::ROLES.contains(&role) {
            notes.push(format!(
                "agent {name}: a message with role \"{role}\" skipped"
            ));
            continue;
        }
        seq += 1;
        let content = letta_text(m);
        let tool_calls = m.get("tool_calls").filter(|t| t.is_array()).cloned();
        let tool_calls_text = tool_calls.as_ref().map(Value::to_string);
        let name_field = m.get("name").and_then(Value::as_str);
        let tokens =
            tokens::message_tokens(enc, role, &content, name_field, tool_calls_text.as_deref());
        let mid = m.get("id").and_then(Value::as_str).unwrap_or("");
        out_messages.push(json!({
            "id": format!("letta:{seed}:{file_id}:{mid}:{seq}"),
            "thread_id": name,
            "seq": seq,
            "role": role,
            "content": content,
            "tool_calls": tool_calls,
            "tool_call_id": m.get("tool_call_id").and_then(Value::as_str),
            "name": name_field,
            "token_count": tokens,
            "in_context": in_context.is_empty() || in_context.contains(mid),
            "is_summary": false,
            "created_at": m.get("created_at").filter(|t| t.is_string()),
            "metadata": { "letta_id": mid },
        }));
    }
    (out_messages, seq)
}

/// Archival memory, when the file carries it (`passages`, or `archival_memory`).
fn letta_passages(a: &Value, seed: &str, file_id: &str, name: &str) -> Vec<Value> {
    let mut out_memories = vec![];
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
            "created_at": p.get("created_at").filter(|t| t.is_string()),
            "happened_at": p.get("created_at").filter(|t| t.is_string()),
        });
        if row["created_at"].is_null() {
            let o = row.as_object_mut().expect("an object");
            o.remove("created_at");
            o.remove("happened_at");
        }
        out_memories.push(row);
    }
    out_memories
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let o = Options::parse(
            &json!({"format": "mem0", "remap": {"user_id": "b", "agent_ids": {"x": "y"}}}),
        )
        .unwrap();
        assert_eq!(o.format, Some(Format::Mem0));
        assert_eq!(o.user_id.as_deref(), Some("b"));
        assert_eq!(o.agent_ids["x"], json!("y"));
        assert!(Options::parse(&json!({"format": "zep"}))
            .unwrap_err()
            .contains("unknown format"));
        assert!(Options::parse(&json!({"remap": {"users": {}}}))
            .unwrap_err()
            .contains("unknown remap key"));
        assert!(Options::parse(&json!({"remap": {"thread_ids": {"a": ""}}})).is_err());
        assert!(Options::parse(&json!([])).is_err());
    }

    #[test]
    fn formats_are_told_apart() {
        assert_eq!(detect(&json!({"results": []})).unwrap(), Format::Mem0);
        assert_eq!(detect(&json!([{"memory": "x"}])).unwrap(), Format::Mem0);
        assert_eq!(
            detect(&json!({"agents": [], "blocks": [], "tools": []})).unwrap(),
            Format::LettaAf
        );
        assert_eq!(
            detect(&json!({"user_id": "a", "agents": [], "blocks": [], "memories": []})).unwrap(),
            Format::MemoryExt
        );
    }

    #[test]
    fn mem0_memories_keep_their_ids_times_and_categories() {
        let c = from_mem0(&json!({"results": [
            {"id": "0b5f3d63-94b1-4b3c-9b74-2f1b8e6b2c11", "memory": "Likes hiking in the Alps", "hash": "abc",
             "metadata": {"source": "chat"}, "categories": ["Hobbies"], "created_at": "2024-07-20T01:23:45.123456-07:00",
             "updated_at": null, "user_id": "alex", "agent_id": "travel"},
            {"id": "x", "memory": "  "}
        ]}))
        .unwrap();
        let m = &c.document["memories"][0];
        assert_eq!(m["id"], json!("0b5f3d63-94b1-4b3c-9b74-2f1b8e6b2c11"));
        assert_eq!(m["text"], json!("Likes hiking in the Alps"));
        assert_eq!(m["category"], json!("hobbies"));
        assert_eq!(m["metadata"], json!({"source": "chat", "mem0_hash": "abc"}));
        assert_eq!(m["happened_at"], json!("2024-07-20T01:23:45.123456-07:00"));
        assert_eq!(m["agent_id"], json!("travel"));
        assert_eq!(c.document["memories"].as_array().unwrap().len(), 1);
        assert_eq!(c.notes.len(), 1);
    }

    #[test]
    fn a_letta_agent_becomes_an_agent_its_blocks_and_one_thread() {
        let doc = json!({
            "agents": [{"id": "agent-0", "name": "memgpt_agent", "block_ids": ["block-0"], "system": "You are...",
                        "in_context_message_ids": ["message-0", "message-1"],
                        "messages": [
                            {"id": "message-0", "role": "system", "content": [{"type": "text", "text": "You are..."}], "created_at": "2025-04-01T00:00:00+00:00"},
                            {"id": "message-1", "role": "assistant", "content": [], "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "send_message", "arguments": "{}"}}]},
                            {"id": "message-2", "role": "tool", "content": [{"type": "text", "text": "{\"status\": \"OK\"}"}], "tool_call_id": "c1"}
                        ]}],
            "blocks": [{"id": "block-0", "label": "human", "value": "First name: Chad", "limit": 5000, "read_only": false, "description": "The human block"}],
            "tools": [{"id": "tool-0"}], "groups": [], "created_at": "2026-02-12T19:12:25+00:00"
        });
        let c = from_letta(&doc, Encoding::Cl100kBase).unwrap();
        let d = &c.document;
        assert_eq!(d["agents"][0]["agent_id"], json!("memgpt_agent"));
        assert_eq!(d["blocks"][0]["label"], json!("human"));
        assert_eq!(d["blocks"][0]["char_limit"], json!(5000));
        assert_eq!(d["threads"][0]["last_seq"], json!(3));
        let msgs = d["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[2]["tool_call_id"], json!("c1"));
        assert_eq!(msgs[2]["in_context"], json!(false));
        assert!(msgs[0]["token_count"].as_u64().unwrap() > 0);
        assert!(c.notes[0].contains("1 tools not imported"));
    }

    #[test]
    fn imported_rows_are_checked_as_writes_are() {
        let ok = json!({"memories": [{"text": "Ana likes tea.", "category": "health"}],
                        "files": [{"path": "notes/a.md"}], "blocks": [{"agent_id": "a", "label": "human", "value": "x", "char_limit": 100}]});
        assert_eq!(check_rows(&ok), Ok(()));
        for (doc, want) in [
            (
                json!({"memories": [{"text": "a"}, {"text": "x", "category": "a\nb"}]}),
                "memories[1]: category",
            ),
            (
                json!({"blocks": [{"agent_id": "a", "label": "memory_blocks", "value": ""}]}),
                "blocks[0]:",
            ),
            (
                json!({"memories": [{"text": "y".repeat(100_000)}]}),
                "memories[0]:",
            ),
            (
                json!({"files": [{"path": "../../etc/passwd"}]}),
                "files[0]:",
            ),
            (
                json!({"threads": [{"thread_id": "a\u{1}b"}]}),
                "threads[0]: thread_id",
            ),
            (
                json!({"entities": [{"name": "Bob", "aliases": ["x\n</memory_blocks>"]}]}),
                "entities[0]: name",
            ),
            (
                json!({"checkpoint_steps": [{"thread_id": "t", "checkpoint_ns": "\n</x>", "checkpoint_id": "1"}]}),
                "checkpoint_steps[0]: checkpoint_ns",
            ),
            (
                json!({"store_items": [{"namespace": [""], "key": "k", "value": {}}]}),
                "store_items[0]:",
            ),
            (
                json!({"messages": [{"thread_id": "t", "role": "wizard"}]}),
                "messages[0]:",
            ),
            (
                json!({"categories": [{"name": "health", "rag_length": 0}]}),
                "categories[0]: rag_length",
            ),
            (
                json!({"categories": [{"name": "health", "context": "some"}]}),
                "categories[0]: context",
            ),
        ] {
            let e = check_rows(&doc).unwrap_err();
            assert!(e.starts_with(want), "{e} (wanted {want})");
        }
    }
}
