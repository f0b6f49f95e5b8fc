//! Entities (docs/api.md "Entities"; docs/design.md "Entities"): the rows of
//! `memory.entities` and `memory.entity_links`. The resolver's rules are
//! crates/memory_core/src/entities.rs; here they meet the tenant's known entities.
//!
//! Every memory written (memory_write, its batch, extraction, updates and merges) is linked to
//! the entities its text and its actor name: [`link`] runs in the write's transaction, so a
//! write and its links land together. A memory's links are rebuilt from its text on every
//! change, and an entity left without a link is deleted: a name lives only as long as a
//! memory mentions it.

use crate::error::raise;
use crate::pg::{spi, tenant};
use memory_core::entities::{self as rules, Entity, Resolved};
use memory_core::SqlState;
use pgrx::prelude::*;
use serde_json::{json, Value};

/// Most entities a tenant's resolution reads (the newest): beyond that, a name is compared with
/// the entities most likely to be mentioned again.
const KNOWN: i64 = 10_000;

/// The tenant's entities, newest last.
pub fn known(user: &str) -> Vec<Entity> {
    spi::rows_generic(
        include_str!("../../sql/queries/entities_known.sql"),
        &[user.into(), KNOWN.into()],
        "reading entities",
        |r| {
            Ok(Entity {
                id: r.get::<String>(1)?.unwrap_or_default(),
                name: r.get::<String>(2)?.unwrap_or_default(),
                kind: r.get::<String>(3)?.unwrap_or_default(),
                aliases: r.get::<Vec<String>>(4)?.unwrap_or_default(),
            })
        },
    )
}

/// Links memory `item` to the entities its `text` and `actor` name, creating the new ones and
/// recording new aliases; the memory's earlier links are replaced, and an entity that loses its
/// last link is deleted.
pub fn link(user: &str, item: &str, text: &str, actor: Option<&str>) {
    let mut known = known(user);
    let mut mentions: Vec<rules::Mention> = actor
        .filter(|a| !rules::norm(a).is_empty())
        .map(|a| rules::Mention {
            name: a.chars().take(rules::MAX_NAME_CHARS).collect(),
            kind: Some("person"),
            initial: false,
        })
        .into_iter()
        .collect();
    // Read in the text's language (German nouns are capitalised; each language has its own
    // common words, days and months: memory_core::entities::mentions_in).
    mentions.extend(rules::mentions_in(
        text,
        memory_core::language::detect(text),
    ));
    let pairs = rules::aliases_in(text);
    let stated = rules::relations_in(text);
    let to_user = stated
        .iter()
        .any(|(a, _, b)| a == rules::THE_USER || b == rules::THE_USER);
    // Names this write would create are claimed first, in one order (no two writes wait on each
    // other's claims), then the entities read again: of two writes naming a new "Zed" at once,
    // the second waits for the first's commit and links to its Zed instead of making another.
    let mut new: Vec<String> = mentions
        .iter()
        .filter(|m| !m.initial)
        .map(|m| m.name.as_str())
        .chain(pairs.iter().map(|(n, _)| n.as_str()))
        .chain(to_user.then_some(rules::THE_USER))
        .filter(|n| rules::resolve(n, None, &known) == Resolved::New)
        .map(rules::norm)
        .collect();
    if !new.is_empty() {
        new.sort();
        new.dedup();
        for n in &new {
            spi::run(
                "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/entity/' || $2, 7322))",
                &[user.into(), n.as_str().into()],
                "claiming an entity name",
            );
        }
        known = self::known(user);
    }
    // What the text says are two names of one entity, first: its mentions then find one.
    for (name, alias) in pairs {
        let i = match rules::resolve(&name, None, &known) {
            Resolved::Known(i) | Resolved::Alias(i) => i,
            Resolved::New => match rules::resolve(&alias, None, &known) {
                // Known by the alias only: the name is the other one.
                Resolved::Known(j) | Resolved::Alias(j) => {
                    add_alias(user, &mut known[j], &name);
                    continue;
                }
                Resolved::New => {
                    known.push(create(user, &name, "thing"));
                    known.len() - 1
                }
            },
        };
        match rules::resolve(&alias, None, &known) {
            Resolved::Known(j) if j != i => {}
            _ => add_alias(user, &mut known[i], &alias),
        }
    }
    let mut ids: Vec<String> = vec![];
    for m in &mentions {
        let i = match rules::resolve(&m.name, m.kind, &known) {
            Resolved::Known(i) => {
                refine(user, &mut known[i], m.kind);
                i
            }
            Resolved::Alias(i) => {
                add_alias(user, &mut known[i], &m.name);
                refine(user, &mut known[i], m.kind);
                i
            }
            // A lone capitalised word at a sentence's start names someone only if known.
            Resolved::New if m.initial => continue,
            Resolved::New => {
                known.push(create(user, &m.name, m.kind.unwrap_or("thing")));
                known.len() - 1
            }
        };
        if !ids.contains(&known[i].id) {
            ids.push(known[i].id.clone());
        }
    }
    let relations = relations_of(user, &stated, &mut known, &mut ids);
    let dropped: Vec<String> = spi::rows(
        include_str!("../../sql/queries/entities_unlink_item.sql"),
        &[user.into(), item.into(), ids.clone().into()],
        "unlinking a memory",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    );
    spi::run(
        include_str!("../../sql/queries/entities_link_item.sql"),
        &[user.into(), item.into(), ids.into()],
        "linking a memory to its entities",
    );
    // A memory's relations are what its text says now: the earlier ones go first (two
    // statements: an insert would still see the rows a delete in its own statement removes).
    spi::run(
        "DELETE FROM memory.entity_relations WHERE user_id = $1 AND item_id = $2::uuid",
        &[user.into(), item.into()],
        "clearing a memory's relations",
    );
    if !relations.0.is_empty() {
        spi::run(
            include_str!("../../sql/queries/entities_relate_item.sql"),
            &[
                user.into(),
                item.into(),
                relations.0.into(),
                relations.1.into(),
                relations.2.into(),
            ],
            "recording a memory's relations",
        );
    }
    drop_orphans(user, Some(&dropped));
}

/// The relations a text states ([`rules::relations_in`]) between the entities it names, as
/// (subjects, relations, objects) for entities_relate_item.sql; each side's id joins `ids` (it
/// is linked too), and the user becomes an entity when a relation points to them ("Robert is
/// the user's brother"). A relation types its sides when they had no type yet.
fn relations_of(
    user: &str,
    stated: &[(String, String, String)],
    known: &mut Vec<Entity>,
    ids: &mut Vec<String>,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut relations: (Vec<String>, Vec<String>, Vec<String>) = Default::default();
    for (a, relation, b) in stated {
        let mut side = |name: &str| -> Option<String> {
            let i = match rules::resolve(name, None, known) {
                Resolved::Known(i) | Resolved::Alias(i) => i,
                Resolved::New if name == rules::THE_USER => {
                    known.push(create(user, rules::THE_USER, "person"));
                    known.len() - 1
                }
                Resolved::New => return None,
            };
            let id = known[i].id.clone();
            if !ids.contains(&id) {
                ids.push(id.clone());
            }
            Some(id)
        };
        if let (Some(x), Some(y)) = (side(a), side(b)) {
            let (sk, ok) = rules::relation_types(relation);
            for (id, kind) in [(&x, sk), (&y, ok)] {
                if let Some(e) = known.iter_mut().find(|e| &e.id == id) {
                    refine(user, e, kind);
                }
            }
            if x != y {
                relations.0.push(x);
                relations.1.push(relation.clone());
                relations.2.push(y);
            }
        }
    }
    relations
}

/// Deletes the entities no memory links to any more, among `ids` (all of the tenant's when
/// `None`): a name lives only as long as a memory mentions it.
pub fn drop_orphans(user: &str, ids: Option<&[String]>) {
    if ids.is_some_and(<[String]>::is_empty) {
        return;
    }
    orphans(Some(user), ids);
}

/// [`drop_orphans`] for one tenant or (`user` None) every tenant the caller sees: after a purge
/// (src/ops/lifecycle.rs), whose cascades delete the purged memories' links.
pub fn orphans(user: Option<&str>, ids: Option<&[String]>) {
    spi::run(
        include_str!("../../sql/queries/entities_drop_orphans.sql"),
        &[user.into(), ids.map(<[String]>::to_vec).into()],
        "deleting entities no memory mentions",
    );
}

/// Records `alias` as another name of `e` (unless it is one already).
fn add_alias(user: &str, e: &mut Entity, alias: &str) {
    let n = rules::norm(alias);
    if n.is_empty()
        || rules::norm(&e.name) == n
        || e.aliases.iter().any(|a| rules::norm(a) == n)
        || alias.chars().count() > rules::MAX_NAME_CHARS
    {
        return;
    }
    e.aliases.push(alias.to_string());
    spi::run(
        include_str!("../../sql/queries/entities_add_alias.sql"),
        &[user.into(), e.id.as_str().into(), alias.into()],
        "adding an alias",
    );
}

/// An entity of unknown type takes the type a mention's context gives.
fn refine(user: &str, e: &mut Entity, kind: Option<&str>) {
    if let Some(k) = kind.filter(|k| e.kind == "thing" && *k != "thing") {
        e.kind = k.to_string();
        spi::run(
            "UPDATE memory.entities SET type = $3, updated_at = now() WHERE user_id = $1 AND id = $2::uuid",
            &[user.into(), e.id.as_str().into(), k.into()],
            "typing an entity",
        );
    }
}

fn create(user: &str, name: &str, kind: &str) -> Entity {
    let id = spi::one_opt::<String>(
        "INSERT INTO memory.entities (user_id, name, type) VALUES ($1, $2, $3) RETURNING id::text",
        &[user.into(), name.into(), kind.into()],
        "creating an entity",
    )
    .unwrap_or_default();
    Entity {
        id,
        name: name.to_string(),
        kind: kind.to_string(),
        aliases: vec![],
    }
}

/// The entities a query names (by any of their names, memory_core::entities::named_in), as ids.
pub fn named_in(user: &str, query: &str) -> Vec<String> {
    if query.trim().is_empty() {
        return vec![];
    }
    let known = known(user);
    rules::named_in(query, &known)
        .into_iter()
        .map(|i| known[i].id.clone())
        .collect()
}

/// The entities a request's `"entity"` means: an id of the tenant's, or a name resolved as a
/// mention is (exactly, by alias, by spelling, by first name). Empty when nobody is known by it.
pub fn lookup(user: &str, entity: &str) -> Vec<String> {
    let known = known(user);
    if let Some(e) = known.iter().find(|e| e.id == entity) {
        return vec![e.id.clone()];
    }
    match rules::resolve(entity, None, &known) {
        Resolved::Known(i) | Resolved::Alias(i) => vec![known[i].id.clone()],
        Resolved::New => vec![],
    }
}

/// Of `items`, those linked to one of `entities`.
pub fn linked(user: &str, entities: &[String], items: &[String]) -> Vec<String> {
    if entities.is_empty() || items.is_empty() {
        return vec![];
    }
    spi::rows(
        include_str!("../../sql/queries/entities_linked_items.sql"),
        &[user.into(), entities.to_vec().into(), items.to_vec().into()],
        "reading entity links",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    )
}

/// A memory_entities row: id, name, type, aliases, memories, updated_at.
pub type Listed = (
    pgrx::Uuid,
    String,
    String,
    Vec<String>,
    i64,
    TimestampWithTimeZone,
);

/// memory_entities: the tenant's entities with how many active memories mention each, most
/// mentioned first; `search` narrows to those with a name or alias containing it.
pub fn list(user_id: Option<&str>, search: Option<&str>, limit: i64) -> Vec<Listed> {
    let user = tenant::resolve(user_id);
    spi::rows(
        include_str!("../../sql/queries/entities_list.sql"),
        &[user.as_str().into(), search.into(), limit.into()],
        "listing entities",
        |r| {
            Ok((
                r.get::<pgrx::Uuid>(1)?
                    .unwrap_or(pgrx::Uuid::from_bytes([0; 16])),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
                r.get::<Vec<String>>(4)?.unwrap_or_default(),
                r.get::<i64>(5)?.unwrap_or(0),
                r.get::<TimestampWithTimeZone>(6)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
            ))
        },
    )
}

fn exists(user: &str, id: &str) -> Entity {
    known(user)
        .into_iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| {
            raise(
                SqlState::NoDataFound,
                format!("entity {id} not found"),
                None,
            )
        })
}

/// memory_entity_merge: `from` becomes part of `into`: its links move, its name and aliases
/// become aliases of `into`, and it is deleted. `{id, name, aliases, memories}`.
pub fn merge(user_id: Option<&str>, into: &str, from: &str) -> Value {
    let user = tenant::resolve(user_id);
    if into == from {
        raise(
            SqlState::InvalidParameterValue,
            "an entity cannot be merged into itself",
            None,
        );
    }
    let (mut keep, gone) = (exists(&user, into), exists(&user, from));
    for a in std::iter::once(&gone.name).chain(&gone.aliases) {
        add_alias(&user, &mut keep, a);
    }
    refine(&user, &mut keep, Some(gone.kind.as_str()));
    spi::run(
        include_str!("../../sql/queries/entities_merge_links.sql"),
        &[user.as_str().into(), into.into(), from.into()],
        "moving an entity's links",
    );
    spi::run(
        include_str!("../../sql/queries/entities_merge_relations.sql"),
        &[user.as_str().into(), into.into(), from.into()],
        "moving an entity's relations",
    );
    spi::run(
        "DELETE FROM memory.entities WHERE user_id = $1 AND id = $2::uuid",
        &[user.as_str().into(), from.into()],
        "deleting a merged entity",
    );
    let memories = spi::one_opt::<i64>(
        "SELECT count(*) FROM memory.entity_links WHERE user_id = $1 AND entity_id = $2::uuid",
        &[user.as_str().into(), into.into()],
        "counting an entity's memories",
    )
    .unwrap_or(0);
    json!({"id": keep.id, "name": keep.name, "type": keep.kind, "aliases": keep.aliases, "memories": memories})
}

/// memory_entity_split: the memories of `id` whose text names `name` (one of its aliases) go to
/// a new entity of that name, which the alias leaves. `{id, name, moved}`.
pub fn split(user_id: Option<&str>, id: &str, name: &str) -> Value {
    let user = tenant::resolve(user_id);
    let e = exists(&user, id);
    let n = rules::norm(name);
    let Some(alias) = e.aliases.iter().find(|a| rules::norm(a) == n).cloned() else {
        raise(
            SqlState::InvalidParameterValue,
            format!("\"{name}\" is not an alias of entity {id}"),
            Some(format!(
                "its aliases: {}",
                if e.aliases.is_empty() {
                    "none".to_string()
                } else {
                    e.aliases.join(", ")
                }
            )),
        );
    };
    // The memories that name it, by the resolver's own reading of their text.
    let linked: Vec<(String, String)> = spi::rows(
        include_str!("../../sql/queries/entities_items.sql"),
        &[user.as_str().into(), id.into()],
        "reading an entity's memories",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
            ))
        },
    );
    let moving: Vec<String> = linked
        .into_iter()
        .filter(|(_, t)| {
            rules::mentions_in(t, memory_core::language::detect(t))
                .iter()
                .any(|m| rules::norm(&m.name) == n)
                || rules::named_in(
                    t,
                    &[Entity {
                        id: String::new(),
                        name: alias.clone(),
                        kind: String::new(),
                        aliases: vec![],
                    }],
                )
                .len()
                    == 1
        })
        .map(|(i, _)| i)
        .collect();
    if moving.is_empty() {
        raise(
            SqlState::InvalidParameterValue,
            format!("no memory of entity {id} names \"{alias}\""),
            Some("merge and split move memories; memory_entity_alias names an entity".into()),
        );
    }
    let new = create(&user, &alias, &e.kind);
    spi::run(
        include_str!("../../sql/queries/entities_remove_alias.sql"),
        &[user.as_str().into(), id.into(), alias.as_str().into()],
        "removing an alias",
    );
    spi::run(
        include_str!("../../sql/queries/entities_link_items.sql"),
        &[
            user.as_str().into(),
            new.id.as_str().into(),
            moving.clone().into(),
        ],
        "linking a split entity",
    );
    spi::run(
        include_str!("../../sql/queries/entities_split_relations.sql"),
        &[
            user.as_str().into(),
            id.into(),
            new.id.as_str().into(),
            moving.clone().into(),
        ],
        "moving a split entity's relations",
    );
    spi::run(
        include_str!("../../sql/queries/entities_unlink_items.sql"),
        &[user.as_str().into(), id.into(), moving.clone().into()],
        "unlinking a split entity",
    );
    drop_orphans(&user, Some(&[id.to_string()]));
    json!({"id": new.id, "name": new.name, "type": new.kind, "moved": moving.len()})
}

/// memory_entity_alias: records another name of an entity by hand (P0002 for an unknown id).
pub fn alias(user_id: Option<&str>, id: &str, name: &str) -> Value {
    let user = tenant::resolve(user_id);
    // An alias is a name shown in recall and matched in queries: refused, not rewritten.
    crate::ops::screen::identifier("alias", name);
    let mut e = exists(&user, id);
    add_alias(&user, &mut e, name);
    json!({"id": e.id, "name": e.name, "type": e.kind, "aliases": e.aliases})
}
