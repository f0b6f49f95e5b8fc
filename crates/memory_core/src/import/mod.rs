//! Import (docs/api.md "Import", docs/migrating.md): memory_import's options, the checks every
//! imported row passes, and the converters that turn the documents of the systems users come
//! from into memory_export's own shape, which sql/import.sql inserts: mem0's lists
//! (import/mem0.rs) and Letta's agent files of every version (import/letta.rs). The way back,
//! memory_export's `format`, is import/export.rs.
//!
//! Ids that are not UUIDs (Letta's "agent-0", "message-3", a mem0 id such as "mem-uuid") are
//! kept as text here; sql/import.sql turns each into a UUID derived from it, so the same
//! document imports to the same rows.

pub mod export;
pub mod letta;
pub mod mem0;

pub use letta::from_letta;
pub use mem0::from_mem0;

use serde_json::{Map, Value};

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
    for f in TIME_FIELDS {
        time(r, f)?;
    }
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
        // memory_configure's rule, and the code as stored (the table's check would fail the
        // import with 23514 naming neither section nor row).
        "settings" => match r.get("language") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(l)) if crate::language::code(l).as_deref() == Ok(l.as_str()) => {
                Ok(())
            }
            _ => Err("language must be an ISO 639-1 code such as \"de\"".into()),
        },
        _ => Ok(()),
    }
}

/// The fields of any section that hold a time.
const TIME_FIELDS: [&str; 8] = [
    "created_at",
    "updated_at",
    "happened_at",
    "valid_until",
    "expires_at",
    "purge_at",
    "last_accessed_at",
    "ts",
];

/// Field `f` of `r` as a time, when it is there: an RFC 3339 time (what memory_export writes,
/// and mem0), or a date and time without an offset (Letta's first format), read as UTC.
///
/// # Why
/// A time Postgres could not read failed the whole import with 22007 naming neither the
/// section nor the row.
fn time(r: &Value, f: &'static str) -> Result<(), String> {
    let s = match r.get(f) {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err(format!("{f} must be a time written as text")),
    };
    let ok = chrono::DateTime::parse_from_rfc3339(s).is_ok()
        || [
            "%Y-%m-%dT%H:%M:%S%.f",
            "%Y-%m-%d %H:%M:%S%.f",
            "%Y-%m-%d %H:%M:%S%.f%#z",
        ]
        .iter()
        .any(|fmt| {
            chrono::NaiveDateTime::parse_from_str(s, fmt).is_ok()
                || chrono::DateTime::parse_from_str(s, fmt).is_ok()
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{f} \"{}\" is not a time (RFC 3339, e.g. 2025-04-01T03:47:27Z)",
            crate::names::shown(&s.chars().take(40).collect::<String>())
        ))
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

/// memory_import's options: `{"format", "remap": {"user_id", "agent_ids", "thread_ids",
/// "fields"}}`. `fields` says where a mem0 id field goes (import/mem0.rs `FIELDS`).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub format: Option<Format>,
    pub user_id: Option<String>,
    pub agent_ids: Map<String, Value>,
    pub thread_ids: Map<String, Value>,
    pub fields: Map<String, Value>,
}

fn fields(v: Option<&Value>) -> Result<Map<String, Value>, String> {
    let m = match v {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(m)) => m,
        Some(_) => return Err("remap.fields must be a JSON object of mem0 field to target".into()),
    };
    for (k, t) in m {
        if !mem0::FIELDS.iter().any(|(f, _)| f == k) {
            return Err(format!(
                "remap.fields: unknown mem0 field \"{}\" ({})",
                crate::names::shown(k),
                mem0::FIELDS.map(|(f, _)| f).join(", ")
            ));
        }
        if !t.as_str().is_some_and(|t| mem0::TARGETS.contains(&t)) {
            return Err(format!(
                "remap.fields.{k} must be one of {}",
                mem0::TARGETS.join(", ")
            ));
        }
    }
    Ok(m.clone())
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
            if !["user_id", "agent_ids", "thread_ids", "fields"].contains(&k.as_str()) {
                return Err(format!(
                    "unknown remap key \"{k}\" (user_id, agent_ids, thread_ids, fields)"
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
            fields: fields(remap.get("fields"))?,
        })
    }
}

/// The format of a document whose options do not say.
pub fn detect(doc: &Value) -> Result<Format, String> {
    let has = |k: &str| doc.get(k).is_some();
    if doc.is_array() || (has("results") && !has("memories")) {
        return Ok(Format::Mem0);
    }
    if (has("agents") && has("blocks") && (has("tools") || has("groups"))) || letta::is_v1(doc) {
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

/// A document published as a JSON string holding the document (three of the agent files in
/// Letta's agent-file repository are): the document, and a note; anything else as it is.
pub fn decoded(doc: &Value) -> Result<(std::borrow::Cow<'_, Value>, Option<String>), String> {
    match doc {
        Value::String(s) => {
            let inner: Value = serde_json::from_str(s).map_err(|e| {
                format!("the document is a JSON string that does not hold a JSON document ({e})")
            })?;
            if inner.is_string() {
                return Err("the document is a JSON string holding another JSON string".into());
            }
            Ok((
                std::borrow::Cow::Owned(inner),
                Some("the document was a JSON string holding the document: decoded".into()),
            ))
        }
        _ => Ok((std::borrow::Cow::Borrowed(doc), None)),
    }
}

/// What a conversion made, and what it left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    pub document: Value,
    pub notes: Vec<String>,
    /// Ids the document gave that the rows could not keep (not UUIDs), by the document's id:
    /// the id in the rows, which sql/import.sql turns into a UUID.
    pub ids: Map<String, Value>,
}

fn text_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn imported_rows_are_checked_as_writes_are() {
        for t in [
            "2026-11-29T15:40:50.123456+00:00",
            "2024-07-01T12:00:00Z",
            "2025-04-01T03:47:27",
            "2025-04-01T03:47:27.492924",
        ] {
            assert_eq!(
                check_rows(&json!({"memories": [{"text": "x", "created_at": t}]})),
                Ok(()),
                "{t}"
            );
        }
        assert_eq!(
            check_rows(&json!({"settings": [{"language": "de"}, {"language": null}]})),
            Ok(())
        );
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
                json!({"settings": [{"language": "Deutsch"}]}),
                "settings[0]: language",
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
            (
                json!({"messages": [{"thread_id": "t", "role": "user", "created_at": "yesterday-ish"}]}),
                "messages[0]: created_at \"yesterday-ish\" is not a time",
            ),
            (
                json!({"memories": [{"text": "x", "happened_at": 5}]}),
                "memories[0]: happened_at must be a time",
            ),
        ] {
            let e = check_rows(&doc).unwrap_err();
            assert!(e.starts_with(want), "{e} (wanted {want})");
        }
    }
}
