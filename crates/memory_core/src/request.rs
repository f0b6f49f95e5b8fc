//! The JSON requests of memory_write and memory_query (docs/api.md), parsed strictly: an unknown key,
//! a wrong type or a value out of range is an error naming the field (SQLSTATE 22023), never a
//! silently ignored option.

use crate::error::{SqlError, SqlState};
use crate::names;
use crate::validate;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde_json::{json, Map, Value};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid \"{field}\": {reason}")]
pub struct RequestError {
    pub field: String,
    pub reason: String,
}

impl SqlError for RequestError {
    fn sqlstate(&self) -> SqlState {
        SqlState::InvalidParameterValue
    }
}

fn err(field: &str, reason: impl Into<String>) -> RequestError {
    RequestError {
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// The memory kinds of docs/api.md.
pub const KINDS: [&str; 6] = [
    "semantic",
    "episodic",
    "procedural",
    "insight",
    "archival",
    "detail",
];
/// The kind, and the category extraction files them under, of steps for agents that execute.
pub const PROCEDURAL: &str = "procedural";
/// Longest category name, in characters.
pub const MAX_CATEGORY_CHARS: usize = names::MAX_CATEGORY_CHARS;
/// Most tags per memory / per filter.
pub const MAX_TAGS: usize = 64;
/// Most dimensions of a supplied embedding (pgvector's limit for `vector`).
pub const MAX_DIMS: usize = 16_000;

struct Fields<'a> {
    obj: &'a Map<String, Value>,
    prefix: &'static str,
}

impl<'a> Fields<'a> {
    fn new(
        v: &'a Value,
        what: &'static str,
        prefix: &'static str,
        allowed: &[&str],
    ) -> Result<Self, RequestError> {
        let obj = v
            .as_object()
            .ok_or_else(|| err(what, "must be a JSON object"))?;
        if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(err(&format!("{prefix}{k}"), "unknown key"));
        }
        Ok(Fields { obj, prefix })
    }

    fn name(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    /// The value, with JSON null treated as absent.
    fn get(&self, k: &str) -> Option<&'a Value> {
        self.obj.get(k).filter(|v| !v.is_null())
    }

    fn string(&self, k: &str) -> Result<Option<String>, RequestError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(err(&self.name(k), "must be a string")),
        }
    }

    fn id(&self, k: &str) -> Result<Option<String>, RequestError> {
        let s = self.string(k)?;
        if let Some(v) = &s {
            validate::id("id", Some(v)).map_err(|e| {
                err(
                    &self.name(k),
                    e.to_string().trim_start_matches("id ").to_string(),
                )
            })?;
        }
        Ok(s)
    }

    fn int(&self, k: &str, min: i64, max: i64) -> Result<Option<i64>, RequestError> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(i) if (min..=max).contains(&i) => Ok(Some(i)),
                _ => Err(err(
                    &self.name(k),
                    format!("must be an integer between {min} and {max}"),
                )),
            },
        }
    }

    fn number(&self, k: &str, min: f64, max: f64) -> Result<Option<f64>, RequestError> {
        match self.get(k) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x >= min && x <= max => Ok(Some(x)),
                _ => Err(err(
                    &self.name(k),
                    format!("must be a number between {min} and {max}"),
                )),
            },
        }
    }

    fn boolean(&self, k: &str) -> Result<Option<bool>, RequestError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(err(&self.name(k), "must be true or false")),
        }
    }

    /// An array of at most `max` strings, each checked (and possibly rewritten) by `each`, whose
    /// error is the reason shown for the field.
    fn list(
        &self,
        k: &str,
        max: usize,
        each: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Option<Vec<String>>, RequestError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Array(a)) => {
                if a.len() > max {
                    return Err(err(
                        &self.name(k),
                        format!("has {} elements, at most {max} allowed", a.len()),
                    ));
                }
                a.iter()
                    .map(|x| match x {
                        Value::String(s) => each(s).map_err(|why| err(&self.name(k), why)),
                        _ => Err(err(&self.name(k), "must be an array of strings")),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some)
            }
            Some(_) => Err(err(&self.name(k), "must be an array of strings")),
        }
    }

    fn strings(&self, k: &str, max: usize) -> Result<Option<Vec<String>>, RequestError> {
        self.list(k, max, |s| {
            if !s.trim().is_empty() && s.chars().count() <= MAX_CATEGORY_CHARS {
                Ok(s.to_string())
            } else {
                Err(format!("must be an array of non-empty strings of at most {MAX_CATEGORY_CHARS} characters"))
            }
        })
    }

    fn time(&self, k: &str) -> Result<Option<DateTime<Utc>>, RequestError> {
        match self.string(k)? {
            None => Ok(None),
            Some(s) => parse_time(&s)
                .map(Some)
                .ok_or_else(|| err(&self.name(k), format!("\"{}\" is not a date or timestamp (ISO 8601, e.g. 2025-07-01 or 2025-07-01T12:00:00Z)", s.chars().take(40).collect::<String>()))),
        }
    }

    fn vector(&self, k: &str) -> Result<Option<Vec<f32>>, RequestError> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Array(a)) => {
                if a.is_empty() || a.len() > MAX_DIMS {
                    return Err(err(
                        &self.name(k),
                        format!("must have 1 to {MAX_DIMS} numbers"),
                    ));
                }
                a.iter()
                    .map(|x| x.as_f64().filter(|x| x.is_finite()).map(|x| x as f32))
                    .collect::<Option<Vec<f32>>>()
                    .map(Some)
                    .ok_or_else(|| err(&self.name(k), "must be an array of finite numbers"))
            }
            Some(_) => Err(err(&self.name(k), "must be an array of numbers")),
        }
    }

    fn one_of(&self, k: &str, allowed: &[&str]) -> Result<Option<String>, RequestError> {
        match self.string(k)? {
            Some(s) if !allowed.contains(&s.as_str()) => Err(err(
                &self.name(k),
                format!("must be one of {}", allowed.join(", ")),
            )),
            other => Ok(other),
        }
    }

    /// A category, normalised as every write path stores it (crate::names::category).
    fn category(&self, k: &str) -> Result<Option<String>, RequestError> {
        self.string(k)?
            .map(|s| names::category(&s).map_err(|e| err(&self.name(k), e.to_string())))
            .transpose()
    }

    /// A list of categories, each normalised (crate::names::category).
    fn categories(&self, k: &str, max: usize) -> Result<Option<Vec<String>>, RequestError> {
        self.list(k, max, |s| names::category(s).map_err(|e| e.to_string()))
    }
}

/// ISO 8601: a date (midnight UTC), a timestamp with offset, or one without (UTC).
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t.and_utc());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
}

pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// memory_write's request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WriteRequest {
    pub user_id: Option<String>,
    pub text: String,
    /// `None` when the request did not say: "semantic" for a new memory, unchanged for an update.
    pub kind: Option<String>,
    pub category: Option<String>,
    pub importance: Option<i16>,
    pub pinned: Option<bool>,
    pub tags: Option<Vec<String>>,
    pub metadata: Option<Value>,
    pub content: Option<String>,
    pub thread_id: Option<String>,
    pub agent_id: Option<String>,
    pub run_id: Option<String>,
    pub actor_id: Option<String>,
    pub role: Option<String>,
    pub happened_at: Option<DateTime<Utc>>,
    pub id: Option<String>,
    pub embedding: Option<Vec<f32>>,
    /// A memory this one replaces (a moved city, a changed preference): it ends where this one
    /// happens, keeps a link to it, and leaves recall (docs/api.md "Supersede").
    pub supersedes: Option<String>,
    /// `user` (stated by the user: written) or `inferred` (concluded by an agent or by
    /// extraction: a sensitive field becomes a consent proposal, docs/api.md "Consent").
    pub source: Option<String>,
    /// How sure an inferring source is, 0 to 1 (an inference with high confidence needs no second sign): an
    /// inferred write to a benign field at `memory_ext.corroborate_confidence` or above needs
    /// no second signal. Not stored with the memory.
    pub confidence: Option<f64>,
    /// The request's `idempotency_key` and the body it stands for (src/idempotency.rs).
    pub idempotency: Option<Idempotency>,
    /// A superuser's screening policy for this call, `{"detector or family": "action"}` over
    /// the operator's (checked by crate::screen; who may give it is checked where it is used).
    pub screen: Option<Value>,
    /// The text's language, an ISO 639-1 code (crate::language::code); `None`: detected, or
    /// the tenant's default (sql/triggers.sql memory._set_language).
    pub language: Option<String>,
    /// The space the memory is written into (docs/api.md "Spaces"); `None`: the caller's own.
    pub space: Option<String>,
}

/// A retried write's key and what it asked for ([`crate::idempotency::body`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Idempotency {
    pub key: String,
    pub body: String,
}

/// Where a memory came from (request field `source`).
pub const SOURCES: [&str; 2] = ["user", "inferred"];

impl WriteRequest {
    /// The request as memory_write takes it, without `embedding` and `source` (a consent
    /// proposal keeps it to write on approval; the text is embedded then).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            if !v.is_null() {
                m.insert(k.to_string(), v);
            }
        };
        put("user_id", json!(self.user_id));
        put("text", json!(self.text));
        put("kind", json!(self.kind));
        put("category", json!(self.category));
        put("importance", json!(self.importance));
        put("pinned", json!(self.pinned));
        put("tags", json!(self.tags));
        put("metadata", self.metadata.clone().unwrap_or(Value::Null));
        put("content", json!(self.content));
        put("thread_id", json!(self.thread_id));
        put("agent_id", json!(self.agent_id));
        put("run_id", json!(self.run_id));
        put("actor_id", json!(self.actor_id));
        put("role", json!(self.role));
        put(
            "happened_at",
            json!(self.happened_at.map(|t| t.to_rfc3339())),
        );
        put("id", json!(self.id));
        put("supersedes", json!(self.supersedes));
        put("language", json!(self.language));
        put("space", json!(self.space));
        Value::Object(m)
    }
}

pub const WRITE_KEYS: [&str; 24] = [
    "space",
    "confidence",
    "language",
    "idempotency_key",
    "screen",
    "source",
    "supersedes",
    "user_id",
    "text",
    "kind",
    "category",
    "importance",
    "pinned",
    "tags",
    "metadata",
    "content",
    "thread_id",
    "agent_id",
    "run_id",
    "actor_id",
    "role",
    "happened_at",
    "id",
    "embedding",
];

pub fn parse_write(v: &Value) -> Result<WriteRequest, RequestError> {
    let f = Fields::new(v, "request", "", &WRITE_KEYS)?;
    let text = f
        .string("text")?
        .ok_or_else(|| err("text", "is required"))?;
    if text.len() > validate::MAX_TEXT_BYTES {
        return Err(err(
            "text",
            format!("is over {} bytes", validate::MAX_TEXT_BYTES),
        ));
    }
    let metadata = match f.get("metadata") {
        None => None,
        Some(m @ Value::Object(_)) => Some(m.clone()),
        Some(_) => return Err(err("metadata", "must be a JSON object")),
    };
    let id = f.string("id")?;
    if let Some(i) = &id {
        if !is_uuid(i) {
            return Err(err("id", "must be a memory id (a UUID)"));
        }
    }
    let supersedes = f.string("supersedes")?;
    if let Some(i) = &supersedes {
        if !is_uuid(i) {
            return Err(err("supersedes", "must be a memory id (a UUID)"));
        }
        if id.is_some() {
            return Err(err(
                "supersedes",
                "cannot be combined with \"id\": an update changes the memory in place",
            ));
        }
    }
    let embedding = match f.get("embedding") {
        None => None,
        Some(Value::Array(a)) => {
            if a.is_empty() || a.len() > MAX_DIMS {
                return Err(err(
                    "embedding",
                    format!("must have 1 to {MAX_DIMS} numbers"),
                ));
            }
            Some(
                a.iter()
                    .map(|x| x.as_f64().filter(|x| x.is_finite()).map(|x| x as f32))
                    .collect::<Option<Vec<f32>>>()
                    .ok_or_else(|| err("embedding", "must be an array of finite numbers"))?,
            )
        }
        Some(_) => return Err(err("embedding", "must be an array of numbers")),
    };
    let screen = match f.get("screen") {
        None | Some(Value::Null) => None,
        Some(v) => {
            crate::screen::Policy::entries_of(v).map_err(|e| err("screen", e))?;
            Some(v.clone())
        }
    };
    let language = match f.string("language")? {
        None => None,
        Some(l) => Some(crate::language::code(&l).map_err(|e| err("language", e))?),
    };
    let space = f.string("space")?;
    if let Some(sp) = &space {
        crate::spaces::name(Some(sp)).map_err(|e| err("space", e.to_string()))?;
    }
    Ok(WriteRequest {
        screen,
        language,
        space,
        user_id: f.id("user_id")?,
        text,
        kind: f.one_of("kind", &KINDS)?,
        category: f.category("category")?,
        importance: f.int("importance", 1, 5)?.map(|i| i as i16),
        pinned: f.boolean("pinned")?,
        tags: f.strings("tags", MAX_TAGS)?,
        metadata,
        content: f.string("content")?,
        thread_id: f.id("thread_id")?,
        agent_id: f.id("agent_id")?,
        run_id: f.id("run_id")?,
        actor_id: f.id("actor_id")?,
        role: f.one_of("role", &validate::ROLES)?,
        happened_at: f.time("happened_at")?,
        id,
        embedding,
        supersedes,
        source: f.one_of("source", &SOURCES)?,
        confidence: f.number("confidence", 0.0, 1.0)?,
        idempotency: f.id(crate::idempotency::FIELD)?.map(|key| Idempotency {
            key,
            body: crate::idempotency::body("memory_write", v),
        }),
    })
}

/// memory_query's filters (docs/design.md "One query tool").
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filters {
    pub user_id: Option<String>,
    pub agent_id: Option<String>,
    /// Memories written in this thread (0.12.0: as a detail search by thread).
    pub thread_id: Option<String>,
    /// Memories linked to one of these entities (memory_query's `"entity"`, resolved to ids
    /// by the store; not a key of `filters`).
    pub entity_ids: Option<Vec<String>>,
    pub run_id: Option<String>,
    pub actor_id: Option<String>,
    pub role: Option<String>,
    pub kind: Option<String>,
    pub category: Option<String>,
    pub tags: Option<Vec<String>>,
    pub pinned: Option<bool>,
    pub importance_min: Option<i16>,
    pub importance_max: Option<i16>,
    pub updated_after: Option<DateTime<Utc>>,
    pub updated_before: Option<DateTime<Utc>>,
    /// When it happened (`happened_at`): from this time on, and before that one.
    pub happened_after: Option<DateTime<Utc>>,
    pub happened_before: Option<DateTime<Utc>>,
    /// What was true then: memories that had happened by this time and were not yet
    /// superseded (superseded ones included). From the request's top level, not `filters`.
    pub as_of: Option<DateTime<Utc>>,
    /// Superseded memories too (from the request's top level).
    pub include_superseded: bool,
    /// Only these kinds (from the request's top level). Without it, and without `kind`,
    /// procedural memories are left out: they are steps for agents that execute, not
    /// conversation (docs/api.md "Kinds in recall").
    pub kinds: Option<Vec<String>>,
}

impl Filters {
    /// Whether recall leaves procedural memories out: nobody asked for a kind, or for the
    /// `procedural` category.
    pub fn default_kinds(&self) -> bool {
        self.kind.is_none() && self.kinds.is_none() && self.category.as_deref() != Some(PROCEDURAL)
    }

    /// Whether the filters narrow recall beyond the tenant and the agent: then the categories in
    /// context `all` are not added to a memory_query (they would not pass the filters).
    pub fn narrows(&self) -> bool {
        let f = Filters {
            user_id: None,
            agent_id: None,
            ..self.clone()
        };
        f != Filters::default()
    }
}

pub const FILTER_KEYS: [&str; 16] = [
    "user_id",
    "agent_id",
    "thread_id",
    "run_id",
    "actor_id",
    "role",
    "kind",
    "category",
    "tags",
    "pinned",
    "importance_min",
    "importance_max",
    "updated_after",
    "updated_before",
    "happened_after",
    "happened_before",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnMode {
    Bullets,
    Full,
}

/// memory_query's request.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRequest {
    pub agent: Option<String>,
    pub query: String,
    pub categories: Option<Vec<String>>,
    pub filters: Filters,
    pub thread_id: Option<String>,
    pub since_rev: Option<i64>,
    pub top_k: usize,
    pub mode: ReturnMode,
    pub budget_tokens: Option<usize>,
    pub threshold: Option<f64>,
    /// The query's vector when the caller has it (skips the embedding call).
    pub embedding: Option<Vec<f32>>,
    /// Each item's score per signal and the pool it came from (docs/api.md "explain").
    pub explain: bool,
    /// What relative times in the query ("yesterday", "last May") are read against; now when
    /// absent (crate::when).
    pub reference_time: Option<DateTime<Utc>>,
    /// Rerank the top of the ranking with the built-in cross-encoder; `None`: the
    /// `memory_ext.rerank` setting decides.
    pub rerank: Option<bool>,
    /// Only memories about this entity, by name or id (docs/design.md "Entities").
    pub entity: Option<String>,
    /// Apply the categories' context modes: categories in context `all` first,
    /// `rag` categories within their `rag_length`. On unless the request says false.
    pub context_modes: bool,
    /// The granted spaces to read besides the caller's own memories (docs/api.md "Spaces");
    /// `None`: every space granted to the caller, `[]`: none.
    pub spaces: Option<Vec<String>>,
}

pub const QUERY_KEYS: [&str; 20] = [
    "spaces",
    "entity",
    "context_modes",
    "kinds",
    "as_of",
    "include_superseded",
    "explain",
    "rerank",
    "reference_time",
    "embedding",
    "agent",
    "query",
    "categories",
    "filters",
    "thread_id",
    "since_rev",
    "top_k",
    "return",
    "budget_tokens",
    "threshold",
];
/// docs/api.md: top_k 1-100; 5 when absent.
pub const DEFAULT_TOP_K: usize = 5;
pub const MAX_TOP_K: i64 = 100;
/// Largest budget accepted, in tokens: a million-token context is beyond any model today.
pub const MAX_BUDGET: i64 = 1_000_000;

pub fn parse_query(v: &Value) -> Result<QueryRequest, RequestError> {
    let f = Fields::new(v, "request", "", &QUERY_KEYS)?;
    let filters = match f.get("filters") {
        None => Filters::default(),
        Some(fv) => {
            let g = Fields::new(fv, "filters", "filters.", &FILTER_KEYS)?;
            let fl = Filters {
                user_id: g.id("user_id")?,
                agent_id: g.id("agent_id")?,
                thread_id: g.id("thread_id")?,
                run_id: g.id("run_id")?,
                actor_id: g.id("actor_id")?,
                role: g.one_of("role", &validate::ROLES)?,
                kind: g.one_of("kind", &KINDS)?,
                category: g.category("category")?,
                tags: g.strings("tags", MAX_TAGS)?,
                pinned: g.boolean("pinned")?,
                importance_min: g.int("importance_min", 1, 5)?.map(|i| i as i16),
                importance_max: g.int("importance_max", 1, 5)?.map(|i| i as i16),
                updated_after: g.time("updated_after")?,
                updated_before: g.time("updated_before")?,
                happened_after: g.time("happened_after")?,
                happened_before: g.time("happened_before")?,
                ..Filters::default()
            };
            if let (Some(a), Some(b)) = (fl.importance_min, fl.importance_max) {
                if a > b {
                    return Err(err(
                        "filters.importance_min",
                        "is greater than filters.importance_max",
                    ));
                }
            }
            fl
        }
    };
    let kinds = f.strings("kinds", KINDS.len())?;
    if let Some(k) = &kinds {
        if let Some(bad) = k.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return Err(err(
                "kinds",
                format!("\"{bad}\" is not a kind: {}", KINDS.join(", ")),
            ));
        }
        if k.is_empty() {
            return Err(err(
                "kinds",
                "is empty: leave it out for every kind but procedural",
            ));
        }
    }
    let filters = Filters {
        kinds,
        as_of: f.time("as_of")?,
        include_superseded: f.boolean("include_superseded")?.unwrap_or(false),
        ..filters
    };
    let categories = f.categories("categories", MAX_TAGS)?;
    // Asking for the category procedures are filed under (extraction's `procedural`) asks for
    // them: "only fetched by agents that need execution hints, by that category".
    let filters = match &categories {
        Some(c) if filters.default_kinds() && c.iter().any(|x| x == PROCEDURAL) => Filters {
            kinds: Some(KINDS.iter().map(|k| k.to_string()).collect()),
            ..filters
        },
        _ => filters,
    };
    Ok(QueryRequest {
        agent: f.id("agent")?,
        query: f.string("query")?.unwrap_or_default(),
        categories,
        filters,
        thread_id: f.id("thread_id")?,
        since_rev: f.int("since_rev", 0, i64::MAX)?,
        top_k: f
            .int("top_k", 1, MAX_TOP_K)?
            .map_or(DEFAULT_TOP_K, |k| k as usize),
        mode: match f.one_of("return", &["bullets", "full"])?.as_deref() {
            Some("full") => ReturnMode::Full,
            _ => ReturnMode::Bullets,
        },
        budget_tokens: f.int("budget_tokens", 1, MAX_BUDGET)?.map(|b| b as usize),
        threshold: f.number("threshold", -1.0, 1.0)?,
        embedding: f.vector("embedding")?,
        explain: f.boolean("explain")?.unwrap_or(false),
        context_modes: f.boolean("context_modes")?.unwrap_or(true),
        entity: f.string("entity")?.filter(|e| !e.trim().is_empty()),
        reference_time: f.time("reference_time")?,
        rerank: f.boolean("rerank")?,
        spaces: f.list("spaces", MAX_SPACES, |s| {
            crate::spaces::name(Some(s))
                .map(str::to_string)
                .map_err(|e| e.to_string())
        })?,
    })
}

/// Most spaces one query names.
pub const MAX_SPACES: usize = 100;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn supersede_requests() {
        let id = "6f1c2a4e-0b9d-4c3e-9a51-2f7d8e0c1b2a";
        let w = parse_write(&json!({"text": "Sam lives in Denver.", "supersedes": id})).unwrap();
        assert_eq!(w.supersedes.as_deref(), Some(id));
        let e = parse_write(&json!({"text": "x", "supersedes": "nope"})).unwrap_err();
        assert_eq!(e.field, "supersedes");
        let e = parse_write(&json!({"text": "x", "supersedes": id, "id": id})).unwrap_err();
        assert_eq!(e.field, "supersedes");
        let q = parse_query(
            &json!({"query": "where", "as_of": "2023-05-08", "include_superseded": true}),
        )
        .unwrap();
        assert_eq!(
            q.filters.as_of.unwrap().to_rfc3339(),
            "2023-05-08T00:00:00+00:00"
        );
        assert!(q.filters.include_superseded);
        let q = parse_query(&json!({"query": "where"})).unwrap();
        assert!(q.filters.as_of.is_none() && !q.filters.include_superseded);
        for r in [
            json!({"query": "deploy", "categories": ["procedural"]}),
            json!({"query": "deploy", "filters": {"category": "procedural"}}),
        ] {
            assert!(!parse_query(&r).unwrap().filters.default_kinds(), "{r}");
        }
        assert!(
            parse_query(&json!({"query": "deploy", "categories": ["work"]}))
                .unwrap()
                .filters
                .default_kinds()
        );
        let q = parse_query(&json!({"query": "how", "kinds": ["procedural", "semantic"]})).unwrap();
        assert!(!q.filters.default_kinds());
        assert!(parse_query(&json!({"query": "how"}))
            .unwrap()
            .filters
            .default_kinds());
        assert!(
            !parse_query(&json!({"query": "how", "filters": {"kind": "procedural"}}))
                .unwrap()
                .filters
                .default_kinds()
        );
        assert_eq!(
            parse_query(&json!({"query": "h", "kinds": ["dream"]}))
                .unwrap_err()
                .field,
            "kinds"
        );
        assert_eq!(
            parse_query(&json!({"query": "h", "kinds": []}))
                .unwrap_err()
                .field,
            "kinds"
        );
        // Top-level keys, not filters.
        assert!(parse_query(&json!({"query": "w", "filters": {"as_of": "2023-05-08"}})).is_err());
    }

    #[test]
    fn write_requests() {
        let w = parse_write(&json!({"text": "Ana likes tea", "importance": 3, "tags": ["food"], "happened_at": "2023-05-08"}))
            .unwrap();
        assert_eq!(w.kind, None);
        assert_eq!(w.importance, Some(3));
        assert_eq!(
            w.happened_at.unwrap().to_rfc3339(),
            "2023-05-08T00:00:00+00:00"
        );
        let e = parse_write(&json!({"text": "x", "colour": "red"})).unwrap_err();
        assert_eq!(e.to_string(), "invalid \"colour\": unknown key");
        assert_eq!(parse_write(&json!({})).unwrap_err().field, "text");
        assert_eq!(
            parse_write(&json!({"text": "x", "importance": 6}))
                .unwrap_err()
                .field,
            "importance"
        );
        assert_eq!(
            parse_write(&json!({"text": "x", "importance": "high"}))
                .unwrap_err()
                .field,
            "importance"
        );
        assert_eq!(
            parse_write(&json!({"text": "x", "kind": "dream"}))
                .unwrap_err()
                .field,
            "kind"
        );
        assert_eq!(
            parse_write(&json!({"text": "x", "id": "nope"}))
                .unwrap_err()
                .field,
            "id"
        );
        assert_eq!(
            parse_write(&json!({"text": "x", "embedding": [1, "a"]}))
                .unwrap_err()
                .field,
            "embedding"
        );
        assert_eq!(
            parse_write(&json!({"text": "x", "metadata": [1]}))
                .unwrap_err()
                .field,
            "metadata"
        );
        assert_eq!(
            parse_write(&json!({"text": "x", "happened_at": "yesterday"}))
                .unwrap_err()
                .field,
            "happened_at"
        );
        assert_eq!(parse_write(&json!("text")).unwrap_err().field, "request");
        // null means absent
        assert_eq!(
            parse_write(&json!({"text": "x", "category": null}))
                .unwrap()
                .category,
            None
        );
    }

    #[test]
    fn query_requests() {
        let q = parse_query(&json!({
            "agent": "planner", "query": "deployment plan", "categories": ["tasks"],
            "filters": {"user_id": "u1", "agent_id": null, "importance_min": 1, "importance_max": 5,
                        "updated_after": "2025-07-01", "updated_before": null},
            "thread_id": "t1", "since_rev": 41, "top_k": 3, "return": "bullets", "budget_tokens": 512, "threshold": 0.65
        }))
        .unwrap();
        assert_eq!(q.top_k, 3);
        assert_eq!(q.filters.user_id.as_deref(), Some("u1"));
        assert_eq!(q.mode, ReturnMode::Bullets);
        let e = parse_query(&json!({"query": "x", "filters": {"colour": 1}})).unwrap_err();
        assert_eq!(e.field, "filters.colour");
        assert_eq!(
            parse_query(&json!({"top_k": 0})).unwrap_err().field,
            "top_k"
        );
        assert_eq!(
            parse_query(&json!({"top_k": 101})).unwrap_err().field,
            "top_k"
        );
        assert_eq!(
            parse_query(&json!({"return": "all"})).unwrap_err().field,
            "return"
        );
        assert_eq!(
            parse_query(&json!({"budget_tokens": -1}))
                .unwrap_err()
                .field,
            "budget_tokens"
        );
        assert_eq!(
            parse_query(&json!({"threshold": 2})).unwrap_err().field,
            "threshold"
        );
        assert_eq!(
            parse_query(&json!({"since_rev": -1})).unwrap_err().field,
            "since_rev"
        );
        assert_eq!(
            parse_query(&json!({"filters": {"importance_min": 4, "importance_max": 2}}))
                .unwrap_err()
                .field,
            "filters.importance_min"
        );
        assert_eq!(
            parse_query(&json!({"filters": {"pinned": "yes"}}))
                .unwrap_err()
                .field,
            "filters.pinned"
        );
        assert_eq!(parse_query(&json!({})).unwrap().top_k, DEFAULT_TOP_K);
    }
}
