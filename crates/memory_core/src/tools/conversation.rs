//! The recall tools: search past messages (`conversation_search`) and list them between two
//! days (`conversation_search_date`). They run in src/ops/tools/conversation.rs.

use super::{object, page, page_size, string, Call, Family, Parse, Role, Tool};
use serde_json::{json, Value};

/// A day argument (Letta's `start_date` / `end_date`).
fn day(d: &str) -> Value {
    json!({"type": "string", "format": "date", "description": d})
}

pub const SEARCH: Tool =
    Tool {
        name: "conversation_search",
        family: Family::Conversation,
        default: true,
        roles: &[Role::SearchesConversation, Role::Paged],
        spec: |_| {
            (
            "Search past messages of your conversations with the user, including those no longer \
             in your context. Results show when each message was sent, its turn number and who \
             sent it."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("page", page()),
                    ("limit", page_size()),
                    (
                        "roles",
                        json!({"type": "array", "items": {"type": "string",
                               "enum": ["user", "assistant", "tool"]},
                               "description": "Only messages by these."}),
                    ),
                    ("start_date", day("Only messages sent on or after this day, YYYY-MM-DD.")),
                    ("end_date", day("Only messages sent on or before this day, YYYY-MM-DD.")),
                ],
                &["query"],
            ),
        )
        },
        parse: Parse::Args(|a| {
            let (start, end) = (a.opt_day("start_date")?, a.opt_day("end_date")?);
            if let (Some(s), Some(e)) = (start, end) {
                if e < s {
                    return Err("\"end_date\" must not be before \"start_date\"".into());
                }
            }
            Ok(Call::ConversationSearch {
                query: a.nonempty("query")?,
                page: a.int("page")? as usize,
                size: a.int("limit")? as usize,
                roles: a.list_of("roles")?,
                start,
                end,
            })
        }),
    };

pub const SEARCH_DATE: Tool = Tool {
    name: "conversation_search_date",
    family: Family::Conversation,
    default: false,
    roles: &[Role::SearchesConversation, Role::Paged],
    spec: |_| {
        let date = day;
        (
            "List past messages of all your conversations sent between two dates, oldest first."
                .into(),
            object(
                vec![
                    ("start_date", date("First day, YYYY-MM-DD.")),
                    ("end_date", date("Last day, YYYY-MM-DD (included).")),
                    ("page", page()),
                ],
                &["start_date", "end_date"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let (start, end) = (a.day("start_date")?, a.day("end_date")?);
        if end < start {
            return Err("\"end_date\" must not be before \"start_date\"".into());
        }
        Ok(Call::ConversationSearchDate {
            start,
            end,
            page: a.int("page")? as usize,
        })
    }),
};
