//! The store (docs/api.md "Store"): namespaced key → JSON documents, LangGraph's `BaseStore`
//! in SQL. This checks what the SQL functions take — namespaces, keys, values, which fields to
//! index, filters, namespace patterns — and pulls the texts to embed out of a value, the way
//! LangGraph's `get_text_at_path` does (langgraph/store/base/embed.py), so that a document
//! indexed here and one indexed by LangGraph's own stores are embedded from the same texts.

use crate::error::{SqlError, SqlState};
use serde_json::{Map, Value};
use std::fmt;

/// Labels in a namespace, at most.
pub const MAX_DEPTH: usize = 32;
/// Characters in a label or a key, at most.
pub const MAX_LABEL_CHARS: usize = 1024;
/// Fields one put may index, at most (each is a vector).
pub const MAX_FIELDS: usize = 32;
/// Texts one put may embed, at most (a `[*]` over a long list is cut here).
pub const MAX_TEXTS: usize = 256;
/// Results of one search or namespace listing, at most.
pub const MAX_LIMIT: i64 = 1000;

/// A store call's bad argument: which, and why (22023).
#[derive(Debug, Clone, PartialEq)]
pub struct StoreError {
    pub field: String,
    pub reason: String,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid \"{}\": {}", self.field, self.reason)
    }
}

impl std::error::Error for StoreError {}

impl SqlError for StoreError {
    fn sqlstate(&self) -> SqlState {
        SqlState::InvalidParameterValue
    }
}

fn err<T>(field: &str, reason: impl Into<String>) -> Result<T, StoreError> {
    Err(StoreError {
        field: field.into(),
        reason: reason.into(),
    })
}

/// A label or key: any text (dots, `%`, `_`, `*`, newlines are all just characters: the
/// namespace is an array, never a joined string), but not empty where `empty_ok` is false, and
/// without NUL (Postgres text cannot hold one) or more than [`MAX_LABEL_CHARS`] characters.
fn label(field: &str, s: &str, empty_ok: bool) -> Result<(), StoreError> {
    if s.is_empty() && !empty_ok {
        return err(field, "must not be empty");
    }
    if s.chars().count() > MAX_LABEL_CHARS {
        return err(field, format!("is over {MAX_LABEL_CHARS} characters"));
    }
    if s.contains('\0') {
        return err(field, "must not contain NUL");
    }
    Ok(())
}

/// An item's namespace: 1 to [`MAX_DEPTH`] non-empty labels.
pub fn namespace(ns: &[Option<String>]) -> Result<Vec<String>, StoreError> {
    if ns.is_empty() {
        return err("namespace", "must have at least one label");
    }
    prefix("namespace", ns)
}

/// A namespace prefix or suffix (may be empty: everything; `*` matches any one label).
pub fn prefix(field: &str, ns: &[Option<String>]) -> Result<Vec<String>, StoreError> {
    if ns.len() > MAX_DEPTH {
        return err(field, format!("has more than {MAX_DEPTH} labels"));
    }
    ns.iter()
        .map(|l| match l {
            None => err(field, "labels must not be null"),
            Some(l) => label(field, l, false).map(|_| l.clone()),
        })
        .collect()
}

/// An item's key: any text but empty or NUL.
pub fn key(k: &str) -> Result<(), StoreError> {
    label("key", k, false)
}

/// A stored value: a JSON object, as LangGraph's items are dicts.
pub fn value(v: &Value) -> Result<(), StoreError> {
    if !v.is_object() {
        return err("value", "must be a JSON object");
    }
    Ok(())
}

/// What a put indexes: nothing (`false`), or the texts at these paths.
#[derive(Debug, Clone, PartialEq)]
pub enum Index {
    Off,
    Fields(Vec<String>),
}

/// `index`: NULL or `true` is the whole document (`["$"]`), `false` nothing, or a list of
/// paths (`"title"`, `"a.b"`, `"tags[*]"`, `"{title,body}"`, `"$"`).
pub fn index(v: Option<&Value>) -> Result<Index, StoreError> {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(true)) => Ok(Index::Fields(vec!["$".into()])),
        Some(Value::Bool(false)) => Ok(Index::Off),
        Some(Value::Array(a)) => {
            if a.len() > MAX_FIELDS {
                return err("index", format!("has more than {MAX_FIELDS} fields"));
            }
            let mut out: Vec<String> = vec![];
            for f in a {
                let Some(f) = f.as_str().filter(|f| !f.is_empty()) else {
                    return err("index", "must list non-empty path strings");
                };
                label("index", f, false)?;
                if !out.iter().any(|o| o == f) {
                    out.push(f.to_string());
                }
            }
            if out.is_empty() {
                return Ok(Index::Off);
            }
            Ok(Index::Fields(out))
        }
        Some(_) => err("index", "must be false or a list of paths"),
    }
}

/// Python's `json.dumps(v, sort_keys=True, ensure_ascii=False)`: `, ` and `: ` separators,
/// keys sorted (serde_json's map is ordered already).
fn dumps(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}: {}", Value::String((*k).clone()), dumps(&o[*k])))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(dumps).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// Python's `str()` of a scalar JSON value.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.into()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn leaf(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Array(_) | Value::Object(_) => Some(dumps(v)),
        other => scalar(other),
    }
}

/// The path's tokens: fields, `[i]`, `[*]`, `*`, `{a,b.c}`.
pub fn tokenize(path: &str) -> Vec<String> {
    let chars: Vec<char> = path.chars().collect();
    let (mut tokens, mut current, mut i) = (vec![], String::new(), 0);
    while i < chars.len() {
        let c = chars[i];
        if c == '[' || c == '{' {
            let close = if c == '[' { ']' } else { '}' };
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
            let (mut depth, mut tok) = (1, c.to_string());
            i += 1;
            while i < chars.len() && depth > 0 {
                if chars[i] == c {
                    depth += 1;
                } else if chars[i] == close {
                    depth -= 1;
                }
                tok.push(chars[i]);
                i += 1;
            }
            tokens.push(tok);
            continue;
        } else if c == '.' {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
        i += 1;
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

fn extract(v: &Value, tokens: &[String], out: &mut Vec<String>) {
    let Some(token) = tokens.first() else {
        out.extend(leaf(v));
        return;
    };
    let rest = &tokens[1..];
    if token.starts_with('[') && token.ends_with(']') {
        let Value::Array(a) = v else { return };
        let inner = &token[1..token.len() - 1];
        if inner == "*" {
            a.iter().for_each(|x| extract(x, rest, out));
        } else if let Ok(i) = inner.trim().parse::<i64>() {
            let i = if i < 0 { a.len() as i64 + i } else { i };
            if let Some(x) = usize::try_from(i).ok().and_then(|i| a.get(i)) {
                extract(x, rest, out);
            }
        }
    } else if token.starts_with('{') && token.ends_with('}') {
        let Value::Object(_) = v else { return };
        for field in token[1..token.len() - 1].split(',').map(str::trim) {
            let mut cur = Some(v);
            for t in tokenize(field) {
                cur = cur.and_then(|c| c.as_object()).and_then(|o| o.get(&t));
            }
            if let Some(found) = cur.and_then(leaf) {
                out.push(found);
            }
        }
    } else if token == "*" {
        match v {
            Value::Object(o) => o.values().for_each(|x| extract(x, rest, out)),
            Value::Array(a) => a.iter().for_each(|x| extract(x, rest, out)),
            _ => {}
        }
    } else if let Some(x) = v.as_object().and_then(|o| o.get(token)) {
        extract(x, rest, out);
    }
}

/// The texts at `path` in `value`, as LangGraph's `get_text_at_path`: `"$"` (or empty) is the
/// whole document as JSON; a scalar is its text; a list or object its JSON.
pub fn texts_at(value: &Value, path: &str) -> Vec<String> {
    if path.is_empty() || path == "$" {
        return vec![dumps(value)];
    }
    let mut out = vec![];
    extract(value, &tokenize(path), &mut out);
    out
}

/// What a put embeds: `(field, text)` per text, `field` the path (and `#i` after the first
/// text of a path that yields several), empty texts left out, at most [`MAX_TEXTS`].
pub fn to_embed(value: &Value, index: &Index) -> Vec<(String, String)> {
    let Index::Fields(fields) = index else {
        return vec![];
    };
    let mut out = vec![];
    for path in fields {
        for (i, t) in texts_at(value, path).into_iter().enumerate() {
            if t.trim().is_empty() || out.len() >= MAX_TEXTS {
                continue;
            }
            let field = if i == 0 {
                path.clone()
            } else {
                format!("{path}#{i}")
            };
            out.push((field, t));
        }
    }
    out
}

/// One condition of a filter: the value at `path` compared with `value` by `op` (`eq`, `ne`,
/// `gt`, `gte`, `lt`, `lte`), as sql/store.sql's `memory._store_match` evaluates it.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub path: Vec<String>,
    pub op: &'static str,
    pub value: Value,
}

fn conditions(
    prefix: &[String],
    filter: &Map<String, Value>,
    out: &mut Vec<Condition>,
) -> Result<(), StoreError> {
    for (k, v) in filter {
        // `$or`, `$and`, `$not`, ...: LangGraph's stores take none of them at a field's place;
        // read as a field name, `{"$or": [...]}` would match nothing (or, negated, everything).
        if k.starts_with('$') {
            return err(
                "filter",
                format!("unknown operator \"{k}\" (operators go inside a field: {{\"field\": {{\"$gt\": 3}}}}; use $eq, $ne, $gt, $gte, $lt, $lte)"),
            );
        }
        let mut path = prefix.to_vec();
        path.push(k.clone());
        match v {
            Value::Object(o) if o.keys().any(|k| k.starts_with('$')) => {
                for (op, x) in o {
                    let op = match op.as_str() {
                        "$eq" => "eq",
                        "$ne" => "ne",
                        "$gt" => "gt",
                        "$gte" => "gte",
                        "$lt" => "lt",
                        "$lte" => "lte",
                        _ => {
                            return err(
                                "filter",
                                format!(
                                "unknown operator \"{op}\" (use $eq, $ne, $gt, $gte, $lt, $lte)"
                            ),
                            )
                        }
                    };
                    out.push(Condition {
                        path: path.clone(),
                        op,
                        value: x.clone(),
                    });
                }
            }
            // A nested object matches field by field (LangGraph's in-memory store does).
            Value::Object(o) => conditions(&path, o, out)?,
            _ => out.push(Condition {
                path,
                op: "eq",
                value: v.clone(),
            }),
        }
    }
    Ok(())
}

/// A search's `filter`: `{"field": value}` (equal), `{"field": {"$gt": 3}}`, nested objects
/// field by field; every condition must hold. As a JSON array for `memory._store_match`.
pub fn filter(v: Option<&Value>) -> Result<Value, StoreError> {
    let mut out = vec![];
    match v {
        None | Some(Value::Null) => {}
        Some(Value::Object(o)) => conditions(&[], o, &mut out)?,
        Some(_) => return err("filter", "must be a JSON object"),
    }
    if out.len() > 64 {
        return err("filter", "has more than 64 conditions");
    }
    Ok(Value::Array(
        out.into_iter()
            .map(|c| serde_json::json!({"path": c.path, "op": c.op, "value": c.value}))
            .collect(),
    ))
}

/// [`filter`]'s conditions split in two: the equalities to a JSON scalar, as one document an
/// item must contain (jsonb `@>`: for a scalar at a path, containment and equality agree), and
/// the rest, still a list for `memory._store_match`. The first is `{}` when there are none.
pub fn split_filter(conds: &Value) -> (Value, Value) {
    let mut contains = Value::Object(Default::default());
    let mut rest = vec![];
    for c in conds.as_array().into_iter().flatten() {
        let path: Vec<&str> = c["path"]
            .as_array()
            .map(|p| p.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let scalar = !matches!(c["value"], Value::Array(_) | Value::Object(_));
        if c["op"] == "eq" && scalar && !path.is_empty() && place(&mut contains, &path, &c["value"])
        {
            continue;
        }
        rest.push(c.clone());
    }
    (contains, Value::Array(rest))
}

/// Puts `value` at `path` in `doc`; false when the path is taken (two equalities on one path,
/// or one under another: left to `memory._store_match`, which answers them exactly).
fn place(doc: &mut Value, path: &[&str], value: &Value) -> bool {
    let Some(obj) = doc.as_object_mut() else {
        return false;
    };
    match path {
        [last] => {
            if obj.contains_key(*last) {
                return false;
            }
            obj.insert((*last).to_string(), value.clone());
            true
        }
        [first, more @ ..] => {
            let next = obj
                .entry((*first).to_string())
                .or_insert_with(|| Value::Object(Default::default()));
            place(next, more, value)
        }
        [] => false,
    }
}

/// A limit or offset: `limit` 1..=[`MAX_LIMIT`], `offset` 0 or more.
pub fn page(
    limit: Option<i64>,
    offset: Option<i64>,
    default_limit: i64,
) -> Result<(i64, i64), StoreError> {
    let limit = limit.unwrap_or(default_limit);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return err("limit", format!("must be between 1 and {MAX_LIMIT}"));
    }
    let offset = offset.unwrap_or(0);
    if offset < 0 {
        return err("offset", "must not be negative");
    }
    Ok((limit, offset))
}

/// Whether `ns` matches a prefix and a suffix (`*` is any one label), as LangGraph's
/// `MatchCondition`s do.
pub fn matches(ns: &[String], prefix: &[String], suffix: &[String]) -> bool {
    let eq = |a: &String, p: &String| p == "*" || a == p;
    ns.len() >= prefix.len()
        && ns.len() >= suffix.len()
        && ns.iter().zip(prefix).all(|(a, p)| eq(a, p))
        && ns
            .iter()
            .rev()
            .zip(suffix.iter().rev())
            .all(|(a, p)| eq(a, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_like_langgraph() {
        let v = json!({"title": "Tea", "n": 2, "ok": true, "tags": ["a", "b"], "meta": {"x": {"y": "deep"}}});
        assert_eq!(texts_at(&v, "title"), vec!["Tea"]);
        assert_eq!(texts_at(&v, "n"), vec!["2"]);
        assert_eq!(texts_at(&v, "ok"), vec!["True"]);
        assert_eq!(texts_at(&v, "tags[*]"), vec!["a", "b"]);
        assert_eq!(texts_at(&v, "tags[-1]"), vec!["b"]);
        assert_eq!(texts_at(&v, "tags"), vec!["[\"a\", \"b\"]"]);
        assert_eq!(texts_at(&v, "meta.x.y"), vec!["deep"]);
        assert_eq!(texts_at(&v, "{title,meta.x.y}"), vec!["Tea", "deep"]);
        assert_eq!(texts_at(&v, "missing"), Vec::<String>::new());
        assert_eq!(
            texts_at(&json!({"b": 1, "a": "é"}), "$"),
            vec!["{\"a\": \"é\", \"b\": 1}"]
        );
    }

    #[test]
    fn index_and_embed() {
        assert_eq!(index(None).unwrap(), Index::Fields(vec!["$".into()]));
        assert_eq!(index(Some(&json!(false))).unwrap(), Index::Off);
        assert!(index(Some(&json!("title"))).is_err());
        let v = json!({"key1": "xxx", "key3": "zzz", "l": ["p", "q"]});
        let i = index(Some(&json!(["key0", "key1", "key3", "l[*]"]))).unwrap();
        assert_eq!(
            to_embed(&v, &i),
            vec![
                ("key1".to_string(), "xxx".to_string()),
                ("key3".into(), "zzz".into()),
                ("l[*]".into(), "p".into()),
                ("l[*]#1".into(), "q".into())
            ]
        );
    }

    #[test]
    fn equalities_to_scalars_become_one_containment() {
        let f = filter(Some(
            &json!({"color": "red", "m": {"a": 1, "b": null}, "score": {"$gte": 4},
                                     "tags": ["x"], "n": {"$ne": 2}}),
        ))
        .unwrap();
        let (contains, rest) = split_filter(&f);
        assert_eq!(contains, json!({"color": "red", "m": {"a": 1, "b": null}}));
        assert_eq!(
            rest,
            json!([
                {"path": ["n"], "op": "ne", "value": 2},
                {"path": ["score"], "op": "gte", "value": 4},
                {"path": ["tags"], "op": "eq", "value": ["x"]}
            ])
        );
        let (c, r) = split_filter(&json!([]));
        assert_eq!((c, r), (json!({}), json!([])));
        // A path under another equality's scalar stays a condition of its own.
        let conds = json!([{"path": ["a"], "op": "eq", "value": 1},
                           {"path": ["a", "b"], "op": "eq", "value": 2}]);
        let (c, r) = split_filter(&conds);
        assert_eq!(c, json!({"a": 1}));
        assert_eq!(r, json!([{"path": ["a", "b"], "op": "eq", "value": 2}]));
    }

    #[test]
    fn filters_and_labels() {
        let f = filter(Some(
            &json!({"color": "red", "score": {"$gte": 4, "$lt": 5}, "m": {"a": 1}}),
        ))
        .unwrap();
        assert_eq!(
            f,
            json!([
                {"path": ["color"], "op": "eq", "value": "red"},
                {"path": ["m", "a"], "op": "eq", "value": 1},
                {"path": ["score"], "op": "gte", "value": 4},
                {"path": ["score"], "op": "lt", "value": 5}
            ])
        );
        assert!(filter(Some(&json!({"a": {"$regex": "x"}}))).is_err());
        assert!(filter(Some(&json!({"$or": [{"a": 1}, {"b": 2}]}))).is_err());
        assert!(filter(Some(&json!({"a": {"b": {"$and": [1]}}}))).is_err());
        assert!(namespace(&[]).is_err());
        assert!(namespace(&[Some("".into())]).is_err());
        assert!(namespace(&[None]).is_err());
        assert!(namespace(&[Some("a.b%_\n".into())]).is_ok());
        let ns = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(matches(
            &ns(&["uid", "users", "alice"]),
            &ns(&["uid", "*", "alice"]),
            &[]
        ));
        assert!(!matches(
            &ns(&["uid", "users", "malice"]),
            &[],
            &ns(&["alice"])
        ));
        assert!(matches(&ns(&["a"]), &[], &[]));
        assert!(!matches(&ns(&["fo"]), &ns(&["foo"]), &[]));
    }
}
