//! The compaction tools: fold older messages into the thread's summary
//! (`summarize_conversation`, with a focus) or everything before a turn
//! (`archive_old_messages`). They run in src/ops/tools/compaction.rs.

use super::{int, object, string, Call, Family, Parse, Role, Tool};

pub const SUMMARIZE: Tool = Tool {
    name: "summarize_conversation",
    family: Family::Compaction,
    default: false,
    roles: &[Role::Compacts],
    spec: |_| {
        (
            "Summarise older messages of this conversation into the summary at the top of your \
             context, to free room; they stay searchable with conversation_search. Turns are \
             the conversation's message numbers (seq)."
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

pub const ARCHIVE: Tool =
    Tool {
        name: "archive_old_messages",
        family: Family::Compaction,
        default: false,
        roles: &[Role::Compacts],
        spec: |_| {
            (
            "Take every message before a turn out of your context, summarised first; they stay \
             searchable with conversation_search."
                .into(),
            object(
                vec![(
                    "before_turn",
                    int("Archive the messages before this one (seq).", 1, i64::MAX, 1),
                )],
                &["before_turn"],
            ),
        )
        },
        parse: Parse::Args(|a| {
            Ok(Call::Archive {
                before: a.int("before_turn")?,
            })
        }),
    };
