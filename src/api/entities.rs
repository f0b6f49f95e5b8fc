//! Entities (docs/api.md "Entities"; docs/design.md "Entities"): `memory_entities`,
//! `memory_entity_merge`, `memory_entity_split`, `memory_entity_alias`. Memories are linked to
//! their entities as they are written; the work is in src/ops/entities.rs.

use crate::error::OrRaise;
use crate::ops::entities as ops;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

fn uuid_arg(name: &'static str, v: Option<pgrx::Uuid>) -> String {
    validate::required(name, v.as_ref()).or_raise().to_string()
}

fn name_arg<'a>(name: &'static str, v: Option<&'a str>) -> &'a str {
    let s = validate::required(name, v).or_raise();
    let n = memory_core::entities::norm(s);
    if n.is_empty() || s.chars().count() > memory_core::entities::MAX_NAME_CHARS {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            format!(
                "{name} must be a name of 1 to {} characters with a letter or digit",
                memory_core::entities::MAX_NAME_CHARS
            ),
            None,
        );
    }
    // A name is read in recall and by models: the category rule for what shows as itself (no
    // line breaks, control, zero-width or mixed-script characters), and no markup.
    let legible = memory_core::names::legible(s).and_then(|()| {
        if s.contains(['<', '>']) {
            Err("contains < or >")
        } else {
            Ok(())
        }
    });
    if let Err(reason) = legible {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            format!("{name} \"{}\" {reason}", memory_core::names::shown(s)),
            None,
        );
    }
    s
}

/// The tenant's entities, each with how many active memories mention it, most mentioned first;
/// `search` keeps those with a name or alias containing it (any case).
#[pg_extern(stable, parallel_safe)]
#[allow(clippy::type_complexity)]
fn memory_entities(
    search: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 100),
    user_id: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(id, pgrx::Uuid),
        name!(name, String),
        name!(type, String),
        name!(aliases, Vec<String>),
        name!(memories, i64),
        name!(updated_at, TimestampWithTimeZone),
    ),
> {
    let limit = *validate::required("limit", limit.as_ref()).or_raise() as i64;
    let limit = validate::range("limit", limit, 1, 10_000).or_raise();
    if let Some(s) = search {
        crate::pg::limits::query("search", s);
    }
    TableIterator::new(ops::list(user_id, search, limit))
}

/// Merges entity `merge_id` into `keep_id`: its memories, name and aliases become
/// `keep_id`'s, and it is deleted. `{id, name, type, aliases, memories}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_entity_merge(
    keep_id: Option<pgrx::Uuid>,
    merge_id: Option<pgrx::Uuid>,
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let keep = uuid_arg("keep_id", keep_id);
    let merge = uuid_arg("merge_id", merge_id);
    JsonB(ops::merge(user_id, &keep, &merge))
}

/// Splits `alias` off entity `entity_id`: a new entity of that name takes the memories whose
/// text names it. `{id, name, type, moved}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_entity_split(
    entity_id: Option<pgrx::Uuid>,
    alias: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let id = uuid_arg("entity_id", entity_id);
    let alias = name_arg("alias", alias);
    JsonB(ops::split(user_id, &id, alias))
}

/// Records another name of entity `entity_id`. `{id, name, type, aliases}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_entity_alias(
    entity_id: Option<pgrx::Uuid>,
    alias: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let id = uuid_arg("entity_id", entity_id);
    let alias = name_arg("alias", alias);
    JsonB(ops::alias(user_id, &id, alias))
}
