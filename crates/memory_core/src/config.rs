//! memory_configure's document (docs/api.md "Categories and allowlists"): categories as
//! docs/design.md's YAML in JSON, either a list of `{"name", "context": "all"|"rag",
//! "rag_length"}` or `{"system": [...], "custom": [...]}`; allowlists mapping an agent to its
//! category names; an optional `"user_id"`. Checked here whole, before anything is written.

use crate::error::{SqlError, SqlState};
use crate::names;
use serde_json::{Map, Value};
use std::fmt;

/// A bad configuration: which field, and why (22023).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid \"{}\": {}", self.field, self.reason)
    }
}

impl std::error::Error for ConfigError {}

impl SqlError for ConfigError {
    fn sqlstate(&self) -> SqlState {
        SqlState::InvalidParameterValue
    }
}

fn err<T>(field: &str, reason: &str) -> Result<T, ConfigError> {
    Err(ConfigError {
        field: field.to_string(),
        reason: reason.to_string(),
    })
}

/// One configured category.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    pub name: String,
    /// `all` (always in context) or `rag` (by retrieval).
    pub context: String,
    pub rag_length: Option<i32>,
    /// Listed under `custom` rather than `system`.
    pub custom: bool,
    /// Screening overrides for memories of this category, `{"detector or family": "action"}`
    /// as given (checked by crate::screen): they may only tighten the operator's policy.
    pub screen: Option<Value>,
}

/// A checked configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    pub user_id: Option<String>,
    pub categories: Vec<Category>,
    /// (agent, category), each pair once, in the order given.
    pub allowlists: Vec<(String, String)>,
    /// The tenant's default language (docs/api.md "Languages"): `None` when the document does
    /// not name it (kept as it is), `Some(None)` for `null` (cleared), else an ISO 639-1 code.
    pub language: Option<Option<String>>,
    /// The document sets the language alone (`{"language": "de"}`): categories and allowlists
    /// are kept as they are, not replaced by none.
    pub language_only: bool,
}

impl Config {
    /// How many agents have an allowlist.
    pub fn agents(&self) -> usize {
        let agents: std::collections::BTreeSet<&str> =
            self.allowlists.iter().map(|a| a.0.as_str()).collect();
        agents.len()
    }
}

/// Checks `cfg`, allowing at most `max_categories` categories.
pub fn parse(cfg: &Value, max_categories: usize) -> Result<Config, ConfigError> {
    let Some(obj) = cfg.as_object() else {
        return err("config", "must be a JSON object");
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !["categories", "allowlists", "user_id", "language"].contains(&k.as_str()))
    {
        return err(k, "unknown key");
    }
    let language = match obj.get("language") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(
            crate::language::code(s).or_else(|e| err("language", &e))?,
        )),
        Some(_) => return err("language", "must be an ISO 639-1 code or null"),
    };
    let language_only =
        language.is_some() && !obj.contains_key("categories") && !obj.contains_key("allowlists");
    let user_id = match obj.get("user_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return err("user_id", "must be a string"),
    };
    let mut categories = vec![];
    match obj.get("categories") {
        None | Some(Value::Null) => {}
        Some(v @ Value::Array(_)) => {
            add_categories(&mut categories, v, false, "categories", max_categories)?
        }
        Some(Value::Object(o)) => {
            if let Some(k) = o
                .keys()
                .find(|k| !["system", "custom"].contains(&k.as_str()))
            {
                return err(
                    &format!("categories.{k}"),
                    "unknown key (use system, custom)",
                );
            }
            if let Some(v) = o.get("system") {
                add_categories(
                    &mut categories,
                    v,
                    false,
                    "categories.system",
                    max_categories,
                )?;
            }
            if let Some(v) = o.get("custom") {
                add_categories(
                    &mut categories,
                    v,
                    true,
                    "categories.custom",
                    max_categories,
                )?;
            }
        }
        Some(_) => {
            return err(
                "categories",
                "must be an array or {\"system\": [...], \"custom\": [...]}",
            )
        }
    }
    let allowlists = match obj.get("allowlists") {
        None | Some(Value::Null) => vec![],
        Some(Value::Object(o)) => allowlists(o, &categories)?,
        Some(_) => {
            return err(
                "allowlists",
                "must be an object mapping agents to category lists",
            )
        }
    };
    Ok(Config {
        user_id,
        categories,
        allowlists,
        language,
        language_only,
    })
}

fn add_categories(
    cats: &mut Vec<Category>,
    list: &Value,
    custom: bool,
    field: &str,
    max: usize,
) -> Result<(), ConfigError> {
    let Some(items) = list.as_array() else {
        return err(field, "must be an array");
    };
    for (i, c) in items.iter().enumerate() {
        if cats.len() >= max {
            return err(
                "categories",
                &format!("more than {max} categories (memory_ext.max_categories)"),
            );
        }
        let f = format!("{field}[{i}]");
        let Some(o) = c.as_object() else {
            return err(&f, "must be an object with \"name\"");
        };
        if let Some(k) = o
            .keys()
            .find(|k| !["name", "context", "rag_length", "screen"].contains(&k.as_str()))
        {
            return err(&format!("{f}.{k}"), "unknown key");
        }
        let Some(raw) = o.get("name").and_then(Value::as_str) else {
            return err(
                &format!("{f}.name"),
                "must be a non-empty string of at most 100 characters",
            );
        };
        // Stored as every write path stores a category (crate::names), so that the names an
        // allowlist grants and a memory carries compare equal.
        let name = names::category(raw).or_else(|e| err(&format!("{f}.name"), &e.to_string()))?;
        let name = name.as_str();
        let context = match o.get("context") {
            None | Some(Value::Null) => "rag",
            Some(Value::String(s)) if s == "all" || s == "rag" => s.as_str(),
            _ => return err(&format!("{f}.context"), "must be \"all\" or \"rag\""),
        };
        let rag_length = match o.get("rag_length") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_i64().filter(|n| (1..=10_000).contains(n)) {
                Some(n) => Some(n as i32),
                None => {
                    return err(
                        &format!("{f}.rag_length"),
                        "must be an integer between 1 and 10000",
                    )
                }
            },
        };
        let screen = match o.get("screen") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let entries = crate::screen::Policy::entries_of(v)
                    .or_else(|e| err(&format!("{f}.screen"), &e))?;
                // Stored as an object whichever way it was written.
                Some(Value::Object(
                    entries
                        .into_iter()
                        .map(|(n, a)| (n, Value::String(a.name().into())))
                        .collect(),
                ))
            }
        };
        if cats.iter().any(|c| c.name == name) {
            return err(
                &format!("{f}.name"),
                &format!("category \"{name}\" is listed twice"),
            );
        }
        cats.push(Category {
            name: name.to_string(),
            context: context.to_string(),
            rag_length,
            custom,
            screen,
        });
    }
    Ok(())
}

fn allowlists(
    o: &Map<String, Value>,
    cats: &[Category],
) -> Result<Vec<(String, String)>, ConfigError> {
    let mut allow: Vec<(String, String)> = vec![];
    for (agent, list) in o {
        if agent.trim().is_empty() || agent.chars().count() > 200 {
            return err(
                "allowlists",
                "agent names must be non-empty and at most 200 characters",
            );
        }
        let f = format!("allowlists.{agent}");
        let Some(items) = list.as_array() else {
            return err(&f, "must be an array of category names");
        };
        for c in items {
            let Some(c) = c.as_str() else {
                return err(&f, "must be an array of category names");
            };
            let c = names::category(c).or_else(|e| err(&f, &e.to_string()))?;
            let c = c.as_str();
            if !cats.iter().any(|x| x.name == c) {
                return err(
                    &f,
                    &format!("category \"{c}\" is not among the configured categories"),
                );
            }
            if !allow.contains(&(agent.clone(), c.to_string())) {
                allow.push((agent.clone(), c.to_string()));
            }
        }
    }
    Ok(allow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_category_shapes_and_allowlists() {
        let c = parse(
            &json!({"categories": {"system": [{"name": "Personal", "context": "all"}],
                                   "custom": [{"name": "Work", "rag_length": 5}]},
                    "allowlists": {"a1": ["Work", "Work", "Personal"]}}),
            100,
        )
        .unwrap();
        assert_eq!(c.categories.len(), 2);
        assert_eq!(c.categories[0].context, "all");
        assert!(c.categories[1].custom);
        assert_eq!(c.categories[1].rag_length, Some(5));
        assert_eq!(c.allowlists.len(), 2);
        assert_eq!(c.agents(), 1);
        let l = parse(&json!({"categories": [{"name": "A"}]}), 100).unwrap();
        assert_eq!(l.categories[0].context, "rag");
    }

    #[test]
    fn errors_name_the_field() {
        let e = |v: Value| parse(&v, 2).unwrap_err().to_string();
        assert_eq!(e(json!([])), "invalid \"config\": must be a JSON object");
        assert_eq!(e(json!({"x": 1})), "invalid \"x\": unknown key");
        assert_eq!(
            e(json!({"user_id": 5})),
            "invalid \"user_id\": must be a string"
        );
        assert_eq!(
            e(json!({"categories": [{"name": "A"}, {"name": " a"}]})),
            "invalid \"categories[1].name\": category \"a\" is listed twice"
        );
        assert!(e(json!({"categories": [{"name": "ci\u{200b}ty"}]})).contains("invisible"));
        assert!(
            e(json!({"categories": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}))
                .contains("more than 2 categories")
        );
        assert_eq!(
            e(json!({"categories": [{"name": "A"}], "allowlists": {"a": ["B"]}})),
            "invalid \"allowlists.a\": category \"b\" is not among the configured categories"
        );
    }
}
