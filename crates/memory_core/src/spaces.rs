//! Spaces (docs/api.md "Spaces"): owners of memories other than one user — a team, a project,
//! an organisation — that members reach through grants.
//!
//! # How a space owns rows
//! A space's rows carry the tenant key `space:<name>` in `user_id`, the column every table is
//! partitioned, indexed, distributed (Citus) and policed by. So a space is a tenant like any
//! other to everything below the API: its statistics, its partition, its shard, its TTL and
//! erasure. What is new is who may act for it: row-level security admits a member's statements
//! through `memory.space_reads` / `memory.space_writes` (sql/security.sql), which look the
//! caller's grants up once per statement. Tenant ids starting with `space:` are reserved: a
//! session cannot claim one through `memory_ext.user_id` (src/pg/tenant.rs).
//!
//! # Access levels
//! `read` sees the space's rows; `write` also writes them; `admin` also grants and revokes.
//! A grant may name an agent (only that agent of the member uses it) and categories (only
//! memories of those categories are seen, and written).

use crate::validate::{self, ArgError};

/// The prefix of a space's tenant key.
pub const PREFIX: &str = "space:";

/// What a grant allows, weakest first (so `>=` compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
    Admin,
}

pub const ACCESS: [&str; 3] = ["read", "write", "admin"];

impl Access {
    pub fn parse(s: &str) -> Result<Access, ArgError> {
        match s {
            "read" => Ok(Access::Read),
            "write" => Ok(Access::Write),
            "admin" => Ok(Access::Admin),
            _ => Err(ArgError::Invalid {
                arg: "access",
                reason: format!("\"{s}\" is not one of read, write, admin"),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        ACCESS[self as usize]
    }
}

/// A space's name, checked: an id (validate::id) without a colon, so that `space:<name>` reads
/// back as one name.
pub fn name(v: Option<&str>) -> Result<&str, ArgError> {
    let n = validate::id("space", v)?;
    if n.contains(':') || n.trim() != n {
        return Err(ArgError::Invalid {
            arg: "space",
            reason: "a space's name has no colon and no leading or trailing spaces".into(),
        });
    }
    Ok(n)
}

/// The tenant key of space `name`'s rows.
pub fn key(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// The space a tenant key belongs to, `None` for a user's.
pub fn of(owner: &str) -> Option<&str> {
    owner.strip_prefix(PREFIX)
}

/// One grant of a space to the current tenant, as the row policies check it.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub access: Access,
    /// Only this agent of the member uses the grant.
    pub agent: Option<String>,
    /// Only memories of these categories.
    pub categories: Option<Vec<String>>,
}

/// The row's kind, for the categories a grant may be limited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row<'a> {
    /// A memory, with its category (`None`: uncategorised).
    Memory(Option<&'a str>),
    /// Anything else: a block, a message, a file, bookkeeping.
    Other,
}

impl Grant {
    /// Whether the grant lets `agent` (the agent a call acts as, if any) reach `row` with at
    /// least `need`.
    ///
    /// A grant limited to categories shows only memories of those categories, and nothing
    /// else of the space; a write under it may also write the rows a memory's write brings
    /// with it (relations, idempotency keys), which are not read back through it.
    pub fn admits(&self, need: Access, agent: Option<&str>, row: Row) -> bool {
        if self.access < need {
            return false;
        }
        if let Some(a) = &self.agent {
            if agent != Some(a.as_str()) {
                return false;
            }
        }
        match (&self.categories, row) {
            (None, _) => true,
            (Some(cs), Row::Memory(c)) => c.is_some_and(|c| cs.iter().any(|x| x == c)),
            (Some(_), Row::Other) => need >= Access::Write,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys() {
        assert_eq!(key("team"), "space:team");
        assert_eq!(of("space:team"), Some("team"));
        assert_eq!(of("alice"), None);
        assert!(name(Some("support team")).is_ok());
        assert!(name(Some("a:b")).is_err());
        assert!(name(Some(" a")).is_err());
        assert!(name(Some("")).is_err());
        assert!(name(None).is_err());
    }

    #[test]
    fn access_orders() {
        assert!(Access::Admin > Access::Write && Access::Write > Access::Read);
        assert_eq!(Access::parse("write").unwrap().name(), "write");
        assert!(Access::parse("owner").is_err());
    }

    #[test]
    fn grants_admit() {
        let g = Grant {
            access: Access::Read,
            agent: None,
            categories: None,
        };
        assert!(g.admits(Access::Read, None, Row::Other));
        assert!(!g.admits(Access::Write, None, Row::Other));
        let a = Grant {
            agent: Some("support".into()),
            ..g.clone()
        };
        assert!(a.admits(Access::Read, Some("support"), Row::Memory(None)));
        assert!(!a.admits(Access::Read, Some("sales"), Row::Memory(None)));
        assert!(!a.admits(Access::Read, None, Row::Memory(None)));
        let c = Grant {
            access: Access::Write,
            agent: None,
            categories: Some(vec!["policy".into()]),
        };
        assert!(c.admits(Access::Read, None, Row::Memory(Some("policy"))));
        assert!(!c.admits(Access::Read, None, Row::Memory(Some("salary"))));
        assert!(!c.admits(Access::Read, None, Row::Memory(None)));
        assert!(!c.admits(Access::Read, None, Row::Other));
        assert!(c.admits(Access::Write, None, Row::Other));
        assert!(!c.admits(Access::Write, None, Row::Memory(Some("salary"))));
    }
}
