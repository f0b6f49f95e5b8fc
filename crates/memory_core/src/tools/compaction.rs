//! The compaction tools: fold older messages into the thread's summary
//! (`summarize_conversation`, with a focus) or everything before a turn
//! (`archive_old_messages`). They run in src/ops/tools/compaction.rs.

use super::{int, object, string, Call, Family, Parse, Role, Tool};

/// Where archive_old_messages stops: a turn number, or the first message quoting these words.
#[derive(Debug, Clone, PartialEq)]
pub enum Before {
    Turn(i64),
    Quote(String),
}

pub const SUMMARIZE: Tool = Tool {
    name: "summarize_conversation",
    family: Family::Compaction,
    default: false,
    roles: &[Role::Compacts],
    spec: |_| {
        (
            "Summarise older messages of this conversation into the summary at the top of your \
             context, to free room; they stay searchable with conversation_search. Turns are \
             the message numbers conversation_search shows (\"turn 12\")."
                .into(),
            object(
                vec![
                    (
                        "focus",
                        string("What the summary should keep, e.g. decisions about the API."),
                    ),
                    (
                        "keep_last",
                        int("Newest messages to leave as they are.", 0, 1000, 10),
                    ),
                    (
                        "start_turn",
                        int("First message to summarise (seq).", 1, i64::MAX, 1),
                    ),
                    (
                        "end_turn",
                        int("Last message to summarise (seq), included.", 1, i64::MAX, 1),
                    ),
                ],
                &[],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let (from, to) = (a.opt_int("start_turn")?, a.opt_int("end_turn")?);
        if let (Some(f), Some(t)) = (from, to) {
            if t < f {
                return Err("\"end_turn\" must not be before \"start_turn\"".into());
            }
        }
        Ok(Call::Summarize {
            from,
            to,
            keep_last: a.int("keep_last")?,
            focus: a.opt_text("focus")?.filter(|f| !f.trim().is_empty()),
        })
    }),
};

pub const ARCHIVE: Tool = Tool {
    name: "archive_old_messages",
    family: Family::Compaction,
    default: false,
    roles: &[Role::Compacts],
    spec: |_| {
        (
            "Take every message before a turn out of your context, summarised first; they stay \
             searchable with conversation_search. Name the first message to keep by its turn \
             number (as conversation_search shows it) or by quoting its words."
                .into(),
            object(
                vec![
                    (
                        "before_turn",
                        int("Archive the messages before this turn.", 1, i64::MAX, 1),
                    ),
                    (
                        "before_message",
                        string("Or: words quoted from the first message to keep."),
                    ),
                ],
                &[],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let quote = a
            .opt_text("before_message")?
            .map(|q| q.trim().to_string())
            .filter(|q| !q.is_empty());
        let turn = a.opt_int("before_turn")?;
        match (turn, quote) {
            (Some(before), None) => Ok(Call::Archive {
                before: Before::Turn(before),
            }),
            (None, Some(q)) => Ok(Call::Archive {
                before: Before::Quote(q),
            }),
            _ => Err("one of \"before_turn\" or \"before_message\" is required (not both)".into()),
        }
    }),
};
