//! memory_export's `format` (docs/migrating.md "Leaving"): a tenant's memory_export document
//! rewritten in the shape another system reads, so nobody is locked in.
//!
//! - `letta_af`: Letta's agent file, v2 (`AgentFileSchema`, letta/schemas/agent_file.py in
//!   Letta's repository; the client test validates it with Letta's own models): each agent with
//!   its blocks (their Letta labels back, when they came from Letta), its threads' messages in
//!   order and which are in context, the files (folders as Letta's sources), skills back where
//!   they came from.
//! - `mem0`: what mem0's `get_all` returns, `{"results": [...]}`, for the active memories, with
//!   the fields mem0 had (kept under `metadata.mem0` by import/mem0.rs) back in their place.
//!
//! What the target has no place for is counted in the document's notes (Letta's
//! `metadata.memory_ext_notes`, mem0's top-level `notes`).

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

fn rows<'a>(doc: &'a Value, section: &str) -> impl Iterator<Item = &'a Value> {
    doc.get(section)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// A Letta agent file of the tenant in `doc` (memory_export's document).
pub fn to_letta(doc: &Value) -> Value {
    let mut notes: Vec<String> = vec![];
    let agents: Vec<&Value> = rows(doc, "agents").collect();
    let mut out_agents = vec![];
    let mut out_blocks = vec![];
    let mut n_block = 0;
    // Each exported block's file id, by its memory_ext id: a block attached to other agents
    // (block_attach) is one block in the file, in each of their block_ids, as Letta shares it.
    let mut exported_ids: BTreeMap<String, String> = BTreeMap::new();
    let mut n_msg = 0;
    let threads_of: BTreeMap<&str, Vec<&str>> =
        rows(doc, "threads").fold(BTreeMap::new(), |mut m, t| {
            if let (Some(a), Some(id)) = (s(t, "agent_id"), s(t, "thread_id")) {
                m.entry(a).or_insert_with(Vec::new).push(id);
            }
            m
        });
    let mut other_threads = 0;
    for (ai, a) in agents.iter().enumerate() {
        let Some(name) = s(a, "agent_id") else {
            continue;
        };
        let meta = a.get("metadata").cloned().unwrap_or(json!({}));
        let labels = meta.get("letta_labels").cloned().unwrap_or(json!({}));
        let mut block_ids = vec![];
        for b in rows(doc, "blocks").filter(|b| s(b, "agent_id") == Some(name)) {
            let label = s(b, "label").unwrap_or("");
            let original = labels.get(label).and_then(Value::as_str).unwrap_or(label);
            let description = s(b, "description").map(|d| {
                let prefix = format!("Letta label \"{original}\".");
                d.strip_prefix(&prefix)
                    .unwrap_or(d)
                    .trim_start()
                    .to_string()
            });
            let id = format!("block-{n_block}");
            n_block += 1;
            block_ids.push(json!(id));
            if let Some(uuid) = s(b, "id") {
                exported_ids.insert(uuid.to_string(), id.clone());
            }
            out_blocks.push(json!({
                "id": id,
                "label": original,
                "value": s(b, "value").unwrap_or(""),
                "limit": b.get("char_limit").cloned().unwrap_or(json!(20000)),
                "description": description.filter(|d| !d.is_empty()),
                "read_only": b.get("read_only").cloned().unwrap_or(json!(false)),
                "metadata": {},
            }));
        }
        let threads = threads_of.get(name).cloned().unwrap_or_default();
        // A Letta agent has one conversation: its first thread (by id) goes; the rest are counted.
        let thread = threads.first().copied();
        other_threads += threads.len().saturating_sub(1);
        let mut messages = vec![];
        let mut in_context = vec![];
        for m in rows(doc, "messages").filter(|m| thread.is_some() && s(m, "thread_id") == thread) {
            let id = format!("message-{n_msg}");
            n_msg += 1;
            if m.get("in_context") == Some(&json!(true)) {
                in_context.push(json!(id));
            }
            let mut msg = json!({
                "type": "message",
                "id": id,
                "role": s(m, "role").unwrap_or("user"),
                "content": [{"type": "text", "text": s(m, "content").unwrap_or("")}],
                "agent_id": format!("agent-{ai}"),
                "created_at": m.get("created_at").cloned().unwrap_or(Value::Null),
            });
            if let Some(c) = m.get("tool_calls").filter(|c| c.is_array()) {
                msg["tool_calls"] = c.clone();
            }
            if let Some(c) = s(m, "tool_call_id") {
                msg["tool_call_id"] = json!(c);
            }
            if let Some(n) = s(m, "name") {
                msg["name"] = json!(n);
            }
            messages.push(msg);
        }
        let archival = rows(doc, "memories")
            .filter(|m| {
                s(m, "state") == Some("active") && s(m, "agent_id").is_none_or(|x| x == name)
            })
            .count();
        if archival > 0 {
            notes.push(format!(
                "agent {name}: {archival} memories not carried (a Letta agent file holds no archival memory): memory_export(format => 'mem0') or the memory_ext export keeps them"
            ));
        }
        let mut agent = json!({
            "id": format!("agent-{ai}"),
            "name": name,
            "system": meta.get("system").cloned().unwrap_or(json!("")),
            "agent_type": meta.get("agent_type").cloned().unwrap_or(json!("letta_v1_agent")),
            "description": meta.get("description").cloned().unwrap_or(Value::Null),
            "tags": meta.get("tags").cloned().unwrap_or(json!([])),
            "block_ids": block_ids,
            "tool_ids": [],
            "source_ids": [],
            "messages": messages,
            "in_context_message_ids": in_context,
            "files_agents": [],
            "group_ids": [],
        });
        if let Some(model) = meta
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| m.contains('/'))
        {
            agent["model"] = json!(model);
        }
        if let Some(tz) = meta.get("timezone") {
            agent["timezone"] = tz.clone();
        }
        out_agents.push(agent);
    }
    for at in rows(doc, "block_attachments") {
        let (Some(name), Some(block)) = (s(at, "agent_id"), s(at, "block_id")) else {
            continue;
        };
        let Some(id) = exported_ids.get(block) else {
            // A space's block: not in the tenant's export.
            notes.push(format!(
                "agent {name}: an attached block of a space not carried (it is the space's)"
            ));
            continue;
        };
        if let Some(a) = out_agents.iter_mut().find(|a| a["name"] == name) {
            if let Some(ids) = a["block_ids"].as_array_mut() {
                ids.push(json!(id));
            }
        }
    }
    if other_threads > 0 {
        notes.push(format!(
            "{other_threads} threads not carried: a Letta agent has one conversation, and each agent's first thread went"
        ));
    }
    let (files, sources, skills) = letta_files(doc);
    let mut metadata = Map::new();
    metadata.insert("exported_by".into(), json!("memory_ext"));
    if !notes.is_empty() {
        metadata.insert("memory_ext_notes".into(), json!(notes.join("\n")));
    }
    json!({
        "agents": out_agents,
        "groups": [],
        "blocks": out_blocks,
        "files": files,
        "sources": sources,
        "tools": [],
        "mcp_servers": [],
        "skills": skills,
        "metadata": metadata,
        "created_at": doc.get("exported_at").cloned().unwrap_or(Value::Null),
    })
}

/// Memory files as Letta's files in sources (a file's first folder is its source), and those
/// under `skills/<name>/` as skills again.
fn letta_files(doc: &Value) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut skills: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut files = vec![];
    for f in rows(doc, "files") {
        let Some(path) = s(f, "path") else { continue };
        let content = s(f, "content").unwrap_or("");
        if let Some(rest) = path.strip_prefix("skills/") {
            if let Some((skill, p)) = rest.split_once('/') {
                skills
                    .entry(skill.to_string())
                    .or_default()
                    .insert(p.to_string(), json!(content));
                continue;
            }
        }
        let folder = path
            .split_once('/')
            .map_or("memory_ext", |(d, _)| d)
            .to_string();
        let n = sources.len();
        let source_id = sources
            .entry(folder.clone())
            .or_insert_with(|| format!("source-{n}"))
            .clone();
        let name = path.rsplit('/').next().unwrap_or(path);
        files.push(json!({
            "id": format!("file-{}", files.len()),
            "source_id": source_id,
            "file_name": path,
            "original_file_name": name,
            "file_size": content.len(),
            "file_type": if path.ends_with(".md") { "text/markdown" } else { "text/plain" },
            "processing_status": "completed",
            "content": content,
        }));
    }
    let sources = sources
        .into_iter()
        .map(|(name, id)| json!({"id": id, "name": name}))
        .collect();
    let skills = skills
        .into_iter()
        .map(|(name, files)| json!({"name": name, "files": files}))
        .collect();
    (files, sources, skills)
}

/// mem0's `get_all` answer for the tenant `user` in `doc` (memory_export's document): its active
/// memories, newest last.
pub fn to_mem0(doc: &Value, user: &str) -> Value {
    let mut results = vec![];
    let mut not_carried = 0;
    for m in rows(doc, "memories") {
        if s(m, "state") != Some("active") {
            continue;
        }
        if s(m, "kind").is_some_and(|k| k == "detail") {
            not_carried += 1;
            continue;
        }
        let mut metadata = m
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let kept = match metadata.remove("mem0") {
            Some(Value::Object(k)) => k,
            _ => Map::new(),
        };
        let immutable = metadata.remove("immutable") == Some(json!(true));
        let id = kept
            .get("id")
            .cloned()
            .unwrap_or_else(|| m.get("id").cloned().unwrap_or(Value::Null));
        let mut categories: Vec<Value> = m
            .get("tags")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(c) = m.get("category").filter(|c| c.is_string()) {
            if !categories.contains(c) {
                categories.insert(0, c.clone());
            }
        }
        let text = s(m, "text").unwrap_or("");
        let mut r = json!({
            "id": id,
            "memory": text,
            "hash": kept.get("hash").cloned().unwrap_or_else(|| json!(format!("{:x}", fingerprint(text)))),
            "metadata": metadata,
            "categories": categories,
            "created_at": m.get("created_at").cloned().unwrap_or(Value::Null),
            "updated_at": m.get("updated_at").cloned().unwrap_or(Value::Null),
            "user_id": kept.get("user_id").cloned().unwrap_or(json!(user)),
            "expiration_date": kept.get("expiration_date").cloned().or_else(|| m.get("valid_until").filter(|v| !v.is_null()).cloned()).unwrap_or(Value::Null),
            "immutable": immutable,
        });
        for (col, field) in [
            ("agent_id", "agent_id"),
            ("thread_id", "run_id"),
            ("actor_id", "actor_id"),
            ("role", "role"),
        ] {
            if let Some(v) = m.get(col).filter(|v| !v.is_null()) {
                r[field] = v.clone();
            }
        }
        // What mem0 said that memory_ext had no column for goes back where it was.
        for (k, v) in kept {
            if !["hash", "id", "expiration_date"].contains(&k.as_str()) {
                r[k.as_str()] = v;
            }
        }
        results.push(r);
    }
    let mut out = json!({ "results": results });
    if not_carried > 0 {
        out["notes"] = json!([format!(
            "{not_carried} detail memories not carried: their content lives in memory_ext's detail store (memory_detail_get)"
        )]);
    }
    out
}

/// A stable 64-bit FNV-1a of a text, for mem0's `hash` where the memory had none (mem0 uses an
/// MD5 it only compares with itself).
fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_becomes_an_agent_file() {
        let doc = json!({
            "exported_at": "2026-01-01T00:00:00+00:00",
            "agents": [{"agent_id": "ezra", "metadata": {"system": "You are Ezra", "letta_labels": {"system__human": "system/human"}}}],
            "blocks": [{"agent_id": "ezra", "label": "system__human", "value": "Sam", "char_limit": 100, "description": "Letta label \"system/human\". Who", "read_only": false}],
            "threads": [{"thread_id": "ezra", "agent_id": "ezra"}, {"thread_id": "side", "agent_id": "ezra"}],
            "messages": [
                {"thread_id": "ezra", "seq": 1, "role": "user", "content": "hi", "in_context": true},
                {"thread_id": "ezra", "seq": 2, "role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}], "in_context": true},
                {"thread_id": "ezra", "seq": 3, "role": "tool", "content": "ok", "tool_call_id": "c1", "in_context": false},
                {"thread_id": "side", "seq": 1, "role": "user", "content": "x", "in_context": true}
            ],
            "memories": [{"state": "active", "text": "Sam likes tea", "agent_id": null}],
            "files": [{"path": "docs/a.md", "content": "A"}, {"path": "skills/pdf/SKILL.md", "content": "how"}]
        });
        let af = to_letta(&doc);
        assert_eq!(af["blocks"][0]["label"], json!("system/human"));
        assert_eq!(af["blocks"][0]["description"], json!("Who"));
        let a = &af["agents"][0];
        assert_eq!(a["system"], json!("You are Ezra"));
        assert_eq!(a["messages"].as_array().unwrap().len(), 3);
        assert_eq!(
            a["in_context_message_ids"],
            json!(["message-0", "message-1"])
        );
        assert_eq!(a["messages"][2]["tool_call_id"], json!("c1"));
        assert_eq!(af["sources"][0]["name"], json!("docs"));
        assert_eq!(af["skills"][0]["files"]["SKILL.md"], json!("how"));
        let notes = af["metadata"]["memory_ext_notes"].as_str().unwrap();
        assert!(
            notes.contains("1 memories not carried") && notes.contains("1 threads not carried"),
            "{notes}"
        );
    }

    #[test]
    fn mem0_fields_go_back_where_they_were() {
        let doc = json!({"memories": [
            {"id": "b7c1c3a0-0000-4000-8000-000000000001", "state": "active", "kind": "semantic", "text": "Ana runs the budget",
             "category": "work", "tags": ["work"], "actor_id": "ana", "thread_id": "standup-3", "valid_until": null,
             "metadata": {"immutable": true, "mem0": {"id": "mem-1", "user_id": "ana", "hash": "h", "app_id": "web", "run_id": "standup-3"}}},
            {"id": "b7c1c3a0-0000-4000-8000-000000000002", "state": "soft_deleted", "text": "gone", "metadata": {}}
        ]});
        let out = to_mem0(&doc, "team");
        let r = &out["results"];
        assert_eq!(r.as_array().unwrap().len(), 1);
        assert_eq!(r[0]["id"], json!("mem-1"));
        assert_eq!(r[0]["user_id"], json!("ana"));
        assert_eq!(r[0]["run_id"], json!("standup-3"));
        assert_eq!(r[0]["app_id"], json!("web"));
        assert_eq!(r[0]["immutable"], json!(true));
        assert_eq!(r[0]["metadata"], json!({}));
        assert_eq!(r[0]["categories"], json!(["work"]));
        assert_eq!(r[0]["hash"], json!("h"));
    }
}
