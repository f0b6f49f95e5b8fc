//! Core memory (docs/api.md "Core memory"): agents, their blocks, the edit operations, and the
//! text `compile_core_blocks` renders into every system prompt.
//!
//! Each edit reads the block with `FOR UPDATE`, computes the new value in `memory_core`, and
//! writes it back: concurrent edits of one block queue on the row lock and none is lost. Any
//! error is raised before the write. Version bumps and history rows come from the triggers
//! (sql/triggers.sql), so a plain UPDATE by an application gets them too.

use crate::error::{raise, OrRaise};
use crate::ops::screen;
use crate::pg::json::Json;
use crate::pg::lookup::{self, Owned};
use crate::pg::spi;
use memory_core::blocks::{self, BlockState, BlockView, Metadata};
use memory_core::SqlState;
use pgrx::prelude::*;
use serde_json::{json, Value};

/// An edit's answer (docs/api.md "Core memory"): the block's label, version and length, and its
/// new text as stored (after screening), so that the caller — a model using the edit tools —
/// sees the state it left (an edit returns the new state).
fn block_json(label: &str, version: i32, value: &str) -> Value {
    json!({ "label": label, "version": version, "chars": blocks::chars(value), "value": value })
}

/// Applies `edit` to the agent's locked block and stores the result.
pub fn edit(
    agent_id: &str,
    label: &str,
    edit: impl FnOnce(&BlockState) -> Result<String, blocks::BlockError>,
) -> Value {
    let caller = lookup::owner(Owned::Agent, agent_id);
    // A block attached to the agent (block_attach) is edited where it lives, once for all.
    let t = target(&caller, agent_id, label);
    if t.read_only {
        // Before the lock: a member with read may not lock the space's row at all.
        attached_read_only(label);
    }
    let (user, agent_id) = (t.owner.as_str(), t.agent.as_str());
    let current = spi::row(
        include_str!("../../sql/queries/blocks_lock.sql"),
        &[user.into(), agent_id.into(), label.into()],
        "reading a block",
        |row| {
            Ok((
                row.get::<String>(1)?.unwrap_or_default(),
                row.get::<i32>(2)?.unwrap_or(blocks::DEFAULT_CHAR_LIMIT),
                row.get::<bool>(3)?.unwrap_or(false),
            ))
        },
    );
    let Some((value, char_limit, read_only)) = current else {
        raise(
            SqlState::NoDataFound,
            format!("block \"{label}\" not found for agent \"{agent_id}\""),
            Some("create it with block_set".into()),
        )
    };
    let state = BlockState {
        label,
        value: &value,
        char_limit,
        read_only,
    };
    let new_value = edit(&state).or_raise();
    // Screened before it is stored (src/ops/screen.rs); a redaction must still fit.
    let new_value = screen::text("block", Some(user), &new_value);
    let new_value = blocks::fits(label, new_value, char_limit).or_raise();
    let version = spi::one_opt::<i32>(
        "UPDATE memory.blocks SET value = $4 WHERE user_id = $1 AND agent_id = $2 AND label = $3 RETURNING version",
        &[
            user.into(),
            agent_id.into(),
            label.into(),
            new_value.as_str().into(),
        ],
        "updating a block",
    )
    .unwrap_or(1);
    block_json(label, version, &new_value)
}

/// memory_agent: creates the agent with its default `persona` and `human` blocks, or returns
/// the existing agent unchanged.
pub fn agent(user_id: Option<&str>, agent_id: &str, persona: &str, human: &str) -> Value {
    // `space:<name>`: an agent of a space, holding the blocks its members attach (docs/api.md
    // "Spaces"); the caller must hold write on the space.
    let user = crate::pg::spaces::resolve_writer(user_id);
    let user = user.as_str();
    let created = spi::one_opt::<bool>(
        "INSERT INTO memory.agents (user_id, agent_id) VALUES ($1, $2) ON CONFLICT (user_id, agent_id) DO NOTHING RETURNING true",
        &[user.into(), agent_id.into()],
        "creating an agent",
    )
    .unwrap_or(false);
    if created {
        let persona = screen::text("block", Some(user), persona);
        let human = screen::text("block", Some(user), human);
        let (persona, human) = (persona.as_str(), human.as_str());
        spi::run(
            include_str!("../../sql/queries/blocks_defaults.sql"),
            &[
                user.into(),
                agent_id.into(),
                blocks::PERSONA_DESCRIPTION.into(),
                persona.into(),
                blocks::HUMAN_DESCRIPTION.into(),
                human.into(),
            ],
            "creating default blocks",
        );
    }
    let list = spi::one_opt::<Json>(
        include_str!("../../sql/queries/blocks_list.sql"),
        &[user.into(), agent_id.into()],
        "listing blocks",
    )
    .map(|j| j.0)
    .unwrap_or_else(|| json!([]));
    json!({ "agent_id": agent_id, "user_id": user, "created": created, "blocks": list })
}

/// block_set: creates or overwrites a block; a read-only block stays read-only.
pub fn set(
    agent_id: &str,
    label: &str,
    value: &str,
    description: Option<&str>,
    char_limit: i32,
    read_only: bool,
) -> Value {
    let caller = lookup::owner(Owned::Agent, agent_id);
    // An attached block is written where it lives (block_attach); a new label is the agent's own.
    let t = target(&caller, agent_id, label);
    if t.read_only {
        attached_read_only(label);
    }
    let (user, agent_id) = (t.owner, t.agent.as_str());
    // Screened before it is stored (src/ops/screen.rs); a redaction must still fit.
    let value = screen::text("block", Some(&user), value);
    let value = blocks::fits(label, value, char_limit).or_raise();
    let value = value.as_str();
    // The label names the block; the description is in every compiled prompt.
    screen::identifier("label", label);
    let description = description.map(|d| screen::text("block", Some(&user), d));
    let description = description.as_deref();
    let existing = spi::one_opt::<bool>(
        "SELECT read_only FROM memory.blocks WHERE user_id = $1 AND agent_id = $2 AND label = $3 FOR UPDATE",
        &[user.as_str().into(), agent_id.into(), label.into()],
        "reading a block",
    );
    if existing == Some(true) {
        Err::<(), _>(blocks::BlockError::ReadOnly {
            label: label.to_string(),
        })
        .or_raise();
    }
    // description NULL keeps the existing description on overwrite.
    let version = spi::one_opt::<i32>(
        include_str!("../../sql/queries/blocks_set.sql"),
        &[
            user.as_str().into(),
            agent_id.into(),
            label.into(),
            description.into(),
            value.into(),
            char_limit.into(),
            read_only.into(),
        ],
        "writing a block",
    )
    .unwrap_or(1);
    block_json(label, version, value)
}

/// The agent's blocks and metadata, rendered (docs/design.md "Core memory blocks" layout). Dates
/// are formatted by Postgres in the session's TimeZone, as that section shows them
/// ("2026-01-23 10:30:00 PST").
pub fn compile(user: &str, agent_id: &str, now: TimestampWithTimeZone) -> String {
    // Read-only (compile_core_blocks is STABLE): one row, the statement aggregates.
    type Row = (String, Option<String>, i64, i64, i64, Option<String>);
    let (date, modified, messages, memories, summaries, latest): Row = spi::rows(
        include_str!("../../sql/queries/blocks_compile.sql"),
        &[user.into(), agent_id.into(), now.into()],
        "compiling blocks",
        |t| {
            Ok((
                t.get::<String>(1)?.unwrap_or_default(),
                t.get::<String>(2)?,
                t.get::<i64>(3)?.unwrap_or(0),
                t.get::<i64>(4)?.unwrap_or(0),
                t.get::<i64>(5)?.unwrap_or(0),
                t.get::<String>(6)?,
            ))
        },
    )
    .pop()
    .unwrap_or_else(|| (String::new(), None, 0, 0, 0, None));
    let latest = latest
        .and_then(|l| serde_json::from_str::<serde_json::Value>(&l).ok())
        .map(|l| blocks::SummaryLine {
            thread: l["thread_id"].as_str().unwrap_or_default().to_string(),
            from_seq: l["from_seq"].as_i64().unwrap_or(0),
            to_seq: l["to_seq"].as_i64().unwrap_or(0),
            date_from: l["date_from"].as_str().unwrap_or_default().to_string(),
            date_to: l["date_to"].as_str().unwrap_or_default().to_string(),
            archived: l["archived"].as_i64().unwrap_or(0),
        });
    let meta = Metadata {
        system_date: date,
        blocks_modified: modified,
        recall_messages: messages,
        archival_memories: memories,
        summaries,
        latest_summary: latest,
    };
    blocks::compile(&views(user, agent_id), &meta)
}

/// The agent's blocks in prompt order (sql/queries/blocks_views.sql), then the blocks attached
/// to it in the order they were attached, each as its owner has it now. An attached block the
/// caller can no longer read (its space was revoked) is left out; one the caller may not write
/// shows as read-only.
fn views(user: &str, agent_id: &str) -> Vec<BlockView> {
    let rows = spi::one_opt::<Json>(
        include_str!("../../sql/queries/blocks_views.sql"),
        &[user.into(), agent_id.into()],
        "reading blocks",
    )
    .map(|j| j.0)
    .unwrap_or_else(|| json!([]));
    let view = |b: &Value, forced: bool| BlockView {
        label: b["label"].as_str().unwrap_or_default().to_string(),
        description: b["description"].as_str().map(str::to_string),
        value: b["value"].as_str().unwrap_or_default().to_string(),
        char_limit: b["char_limit"].as_i64().unwrap_or(0) as i32,
        read_only: forced || b["read_only"].as_bool().unwrap_or(false),
    };
    let mut out: Vec<BlockView> = rows
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| view(b, false))
        .collect();
    for a in attachments(user, agent_id) {
        // Read by its owner's key (on Citus, routed to the owner's shard).
        let b = spi::one_opt::<Json>(
            include_str!("../../sql/queries/blocks_attached.sql"),
            &[a.owner.as_str().into(), a.block_id.as_str().into()],
            "reading an attached block",
        );
        if let Some(Json(b)) = b {
            out.push(view(&b, a.read_only || !may_write(user, &a.owner)));
        }
    }
    out
}

/// A block attached to an agent (block_attach).
struct Attachment {
    owner: String,
    block_id: String,
    read_only: bool,
}

fn attachments(user: &str, agent_id: &str) -> Vec<Attachment> {
    spi::rows(
        "SELECT owner, block_id::text, read_only FROM memory.block_attachments
         WHERE user_id = $1 AND agent_id = $2 ORDER BY attached_at, block_id",
        &[user.into(), agent_id.into()],
        "reading attached blocks",
        |r| {
            Ok(Attachment {
                owner: r.get::<String>(1)?.unwrap_or_default(),
                block_id: r.get::<String>(2)?.unwrap_or_default(),
                read_only: r.get::<bool>(3)?.unwrap_or(false),
            })
        },
    )
}

/// Whether the caller may write the rows of `owner`: its own, or a space it holds write on.
fn may_write(user: &str, owner: &str) -> bool {
    owner == user
        || spi::one_opt::<bool>(
            "SELECT memory.space_writes($1, false, NULL)",
            &[owner.into()],
            "checking a space's grant",
        )
        .unwrap_or(false)
}

/// 42501 for an edit of an attached block the agent may only read.
fn attached_read_only(label: &str) -> ! {
    raise(
        SqlState::InsufficientPrivilege,
        format!("block \"{label}\" is read-only to this agent"),
        Some("it is attached read-only, or its space is granted to this tenant read-only".into()),
    )
}

/// Where an agent's block `label` lives: the agent's own block, or the block attached to it
/// under that label, with whether the attachment or the caller's grant make it read-only.
struct Target {
    owner: String,
    agent: String,
    read_only: bool,
}

fn target(user: &str, agent_id: &str, label: &str) -> Target {
    if !mine(user, agent_id, label) {
        if let Some((a, agent)) = attached(user, agent_id, label) {
            return Target {
                read_only: a.read_only || !may_write(user, &a.owner),
                owner: a.owner,
                agent,
            };
        }
    }
    Target {
        owner: user.to_string(),
        agent: agent_id.to_string(),
        read_only: false,
    }
}

/// The block attached to the agent under `label`, with the agent it belongs to.
fn attached(user: &str, agent_id: &str, label: &str) -> Option<(Attachment, String)> {
    attachments(user, agent_id).into_iter().find_map(|a| {
        let agent = spi::row(
            "SELECT agent_id FROM memory.blocks WHERE user_id = $1 AND id = $2::uuid AND label = $3",
            &[a.owner.as_str().into(), a.block_id.as_str().into(), label.into()],
            "reading an attached block",
            |r| r.get::<String>(1).map(Option::unwrap_or_default),
        )?;
        Some((a, agent))
    })
}

/// block_attach: attaches block `block_id` — the caller's own (of another of its agents) or a
/// granted space's — to the caller's agent `agent_id`, read-only if asked (or if the caller may
/// not write it). `{agent_id, block_id, label, space, read_only}`.
pub fn attach(agent_id: &str, block_id: &str, read_only: bool) -> Value {
    let user = lookup::owner(Owned::Agent, agent_id);
    // The block, as the caller may see it: its own first, else a granted space's.
    let mut owners = vec![user.clone()];
    owners.extend(
        crate::pg::spaces::readable(None, None)
            .into_iter()
            .map(|(k, _)| k),
    );
    let found = spi::row(
        "SELECT user_id, agent_id, label FROM memory.blocks WHERE user_id = ANY($1) AND id = $2::uuid
         ORDER BY user_id = $3 DESC LIMIT 1",
        &[owners.into(), block_id.into(), user.as_str().into()],
        "finding a block",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?.unwrap_or_default(),
            ))
        },
    );
    let Some((owner, owner_agent, label)) = found else {
        raise(
            SqlState::NoDataFound,
            format!("block {block_id} not found"),
            Some("a block of the caller's own agents or of a space granted to it".into()),
        )
    };
    if owner == user && owner_agent == agent_id {
        raise(
            SqlState::InvalidParameterValue,
            format!("block \"{label}\" is agent \"{agent_id}\"'s own"),
            None,
        );
    }
    let taken = mine(&user, agent_id, &label)
        || attached(&user, agent_id, &label).is_some_and(|(a, _)| a.block_id != block_id);
    if taken {
        raise(
            SqlState::InvalidParameterValue,
            format!("agent \"{agent_id}\" already has a block labelled \"{label}\""),
            Some("a label names one block in an agent's prompt".into()),
        );
    }
    spi::run(
        "INSERT INTO memory.block_attachments (user_id, agent_id, owner, block_id, read_only)
         VALUES ($1, $2, $3, $4::uuid, $5)
         ON CONFLICT (user_id, agent_id, block_id) DO UPDATE SET read_only = EXCLUDED.read_only",
        &[
            user.as_str().into(),
            agent_id.into(),
            owner.as_str().into(),
            block_id.into(),
            read_only.into(),
        ],
        "attaching a block",
    );
    json!({
        "agent_id": agent_id, "block_id": block_id, "label": label,
        "space": memory_core::spaces::of(&owner),
        "read_only": read_only || !may_write(&user, &owner),
    })
}

fn mine(user: &str, agent_id: &str, label: &str) -> bool {
    spi::one_opt::<bool>(
        "SELECT true FROM memory.blocks WHERE user_id = $1 AND agent_id = $2 AND label = $3",
        &[user.into(), agent_id.into(), label.into()],
        "reading a block",
    )
    .is_some()
}

/// block_detach: takes block `block_id` out of agent `agent_id`'s prompt; the block stays
/// where it lives. `{agent_id, block_id, detached}`.
pub fn detach(agent_id: &str, block_id: &str) -> Value {
    let user = lookup::owner(Owned::Agent, agent_id);
    let n = spi::one_opt::<i64>(
        "WITH d AS (DELETE FROM memory.block_attachments
                    WHERE user_id = $1 AND agent_id = $2 AND block_id = $3::uuid RETURNING 1)
         SELECT count(*) FROM d",
        &[user.as_str().into(), agent_id.into(), block_id.into()],
        "detaching a block",
    )
    .unwrap_or(0);
    json!({ "agent_id": agent_id, "block_id": block_id, "detached": n > 0 })
}

/// compile_blocks: the `<memory_blocks>` section alone and its SHA-256, for prompt caching. It
/// holds no clock and no counts, so the text is byte-identical, and the hash equal, until a
/// block changes.
pub fn compile_cached(agent_id: &str) -> Value {
    let user = lookup::owner(Owned::Agent, agent_id);
    let text = blocks::compile_blocks(&views(&user, agent_id));
    let hash = spi::one_opt::<String>(
        "SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')",
        &[text.as_str().into()],
        "hashing the blocks",
    )
    .unwrap_or_default();
    json!({"text": text, "hash": hash})
}

/// compile_core_blocks for an agent, its tenant looked up.
pub fn compile_agent(agent_id: &str, now: TimestampWithTimeZone) -> String {
    let user = lookup::owner(Owned::Agent, agent_id);
    compile(&user, agent_id, now)
}
