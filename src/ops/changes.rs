//! memory_changes (docs/api.md "Change feed"): what changed in the caller's memory since a
//! cursor. The feed is written by triggers (sql/changes.sql); the cursor is
//! memory_core::changes.

use crate::error::OrRaise;
use crate::pg::json::JsonText;
use crate::pg::{spi, tenant};
use memory_core::changes::{Cursor, DEFAULT_LIMIT, MAX_LIMIT};
use memory_core::validate;
use pgrx::JsonB;
use serde_json::json;

/// The channel every change notifies (sql/changes.sql `memory._change`).
pub const CHANNEL: &str = "memory_ext_changes";

/// `{changes: [{entity, id, op, revision, at}], cursor, channel, tags}`: up to `limit` changes
/// after `since` (from the start of the feed when NULL), the cursor to pass next time (the
/// same one when nothing changed), and what a LISTEN client filters the channel's
/// notifications by.
pub fn read(since: Option<&str>, limit: Option<i32>) -> JsonB {
    let user = tenant::resolve(None);
    let limit = validate::range(
        "limit",
        limit.map_or(DEFAULT_LIMIT, i64::from),
        1,
        MAX_LIMIT,
    )
    .or_raise();
    let epoch: String = spi::one_opt(
        "SELECT memory._feed_epoch()",
        &[],
        "reading the feed's epoch",
    )
    .unwrap_or_default();
    // `now`: no changes, the cursor at the end of the feed as it is (a reader that wants only
    // what comes next: a new webhook, src/webhook.rs of the gateway).
    let from_now = since.is_some_and(|s| s.trim() == "now");
    let mut cursor = match since {
        _ if from_now => Cursor::start(&epoch),
        Some(s) => Cursor::parse(s, &epoch).or_raise(),
        None => Cursor::start(&epoch),
    };
    // The caller's own changes, and those of the spaces granted to it (docs/api.md "Spaces").
    let spaces: Vec<String> = crate::pg::spaces::readable_together(None)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    let mut owners = vec![user.clone()];
    owners.extend(spaces);
    let (sql, who) = if owners.len() == 1 {
        (
            include_str!("../../sql/queries/changes_read.sql"),
            user.as_str().into(),
        )
    } else {
        (
            include_str!("../../sql/queries/changes_read_spaces.sql"),
            owners.clone().into(),
        )
    };
    if from_now {
        let end = spi::row(
            include_str!("../../sql/queries/changes_end.sql"),
            &[owners.clone().into()],
            "reading the end of the change feed",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<i64>(2)?.unwrap_or_default(),
                ))
            },
        );
        if let Some((xid, seq)) = end {
            cursor.xid = xid.parse().unwrap_or(0);
            cursor.seq = seq;
        }
    }
    let limit = if from_now { 0 } else { limit };
    let rows: Vec<(String, i64, serde_json::Value)> = spi::rows(
        sql,
        &[
            who,
            cursor.xid.to_string().into(),
            cursor.seq.into(),
            limit.into(),
        ],
        "reading the change feed",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<i64>(2)?.unwrap_or_default(),
                r.get::<JsonText>(3)?.map(|j| j.value()).unwrap_or_default(),
            ))
        },
    );
    if let Some((xid, seq, _)) = rows.last() {
        cursor.xid = xid.parse().unwrap_or(cursor.xid);
        cursor.seq = *seq;
    }
    // The tags are made with the feed's secret, which only the owner reads; `owners` are the
    // caller's own tenant (tenant::resolve checked it) and the spaces granted to it, so the
    // caller learns only the tags of what it may read.
    let tags: Vec<String> = crate::pg::owner::as_owner(|| {
        spi::rows(
            "SELECT memory._owner_tag(o) FROM unnest($1::text[]) WITH ORDINALITY u(o, n) ORDER BY n",
            &[owners.into()],
            "reading the notification tags",
            |r| r.get::<String>(1).map(Option::unwrap_or_default),
        )
    });
    JsonB(json!({
        "changes": rows.into_iter().map(|(_, _, c)| c).collect::<Vec<_>>(),
        "cursor": cursor.text(),
        "channel": CHANNEL,
        "tags": tags,
    }))
}
