//! Operational events (docs/design.md "Operational events"): one small row per thing the system did — a query, a write,
//! a merge, a delete, a stored detail, an episode, a compaction, a worker job — written where the
//! data already exists, so "what changed and when" has an answer without logs.
//! `memory.event_counts` (sql/events.sql) counts them by hour, node, op and status.
//!
//! Recording is one INSERT in the caller's transaction: an event exists exactly when what it
//! reports was committed. `memory_ext.track_events = off` turns it off.

use crate::gucs;

/// Where in a call's flow (read, write, context) an event happened.
#[derive(Clone, Copy)]
pub enum Node {
    /// Writes on the request path (memory_write, forget, ref store, files).
    Hotpath,
    /// Retrieval and the context window (memory_query, compaction).
    Context,
    /// Episodes (episode_write).
    Episodic,
    /// The background jobs, whoever runs them.
    Worker,
}

impl Node {
    fn name(self) -> &'static str {
        match self {
            Node::Hotpath => "hotpath",
            Node::Context => "context",
            Node::Episodic => "episodic",
            Node::Worker => "worker",
        }
    }
}

/// One event; the optional fields say what only some events have.
pub struct Event<'a> {
    pub user: &'a str,
    pub thread: Option<&'a str>,
    pub node: Node,
    pub op: &'a str,
    /// `ok`, `error` or `skipped`.
    pub status: &'a str,
    pub memory_id: Option<&'a str>,
    pub category: Option<&'a str>,
    /// Best neighbour or hit score, when there is one.
    pub sim: Option<f32>,
    /// The SQLSTATE of the error an `error` event reports, when it was a SQL error (a tool
    /// call's answer tells the model in words; the code stays here).
    pub sqlstate: Option<&'a str>,
}

impl<'a> Event<'a> {
    pub fn new(user: &'a str, node: Node, op: &'a str) -> Self {
        Event {
            user,
            thread: None,
            node,
            op,
            status: "ok",
            memory_id: None,
            category: None,
            sim: None,
            sqlstate: None,
        }
    }
}

pub fn record(e: Event<'_>) {
    if !gucs::track_events() {
        return;
    }
    crate::pg::spi::run_kept(
        include_str!("../../sql/queries/events_record.sql"),
        &[
            e.user.into(),
            e.thread.into(),
            e.node.name().into(),
            e.op.into(),
            e.status.into(),
            e.memory_id.into(),
            e.category.into(),
            e.sim.into(),
            e.sqlstate.into(),
        ],
        "recording an event",
    );
}
