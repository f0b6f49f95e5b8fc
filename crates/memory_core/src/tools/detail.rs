//! The detail-memory tools: open a `[MemoryRef: ...]` placeholder (`memory_ref_get`, and
//! `retrieve_memory` by its own argument name), keep a long text out of the context
//! (`store_memory`) and find stored details by their descriptions (`search_memory`). They run
//! in src/ops/tools/detail.rs.

use super::{int, object, string, Call, Family, Parse, Role, Tool};

pub const REF_GET: Tool = Tool {
    name: "memory_ref_get",
    family: Family::Detail,
    default: true,
    roles: &[Role::OpensRefs],
    spec: |_| {
        (
            "Open a stored detail from a placeholder like [MemoryRef: key - description]: \
             returns its content, a part at a time."
                .into(),
            object(
                vec![
                    ("key", string("The key from the placeholder.")),
                    (
                        "offset",
                        int("Character offset to read from.", 0, i64::from(i32::MAX), 0),
                    ),
                ],
                &["key"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::RefGet {
            key: a.nonempty("key")?,
            offset: a.int("offset")?,
        })
    }),
};

pub const STORE: Tool =
    Tool {
        name: "store_memory",
        family: Family::Detail,
        default: false,
        roles: &[Role::StoresDetails],
        spec: |_| {
            (
            "Store a long text (a command's output, a document, a result) in detail memory and \
             get a short placeholder [MemoryRef: key - description] to keep in your context \
             instead; retrieve_memory opens it again."
                .into(),
            object(
                vec![
                    ("content", string("The text to store, whole.")),
                    ("description", string("A few words on what it is, e.g. npm install log.")),
                    ("type", string("Its kind, e.g. command_output, file_content, api_response.")),
                ],
                &["content", "description"],
            ),
        )
        },
        parse: Parse::Args(|a| {
            Ok(Call::DetailStore {
                content: a.nonempty("content")?,
                description: a.nonempty("description")?,
                kind: match a.opt_text("type")? {
                    None => "command_output".into(),
                    Some(t) if crate::detail::valid_type(t.trim()) => t.trim().to_string(),
                    Some(t) => {
                        return Err(format!(
                            "\"type\" must be 1-50 letters, digits, '_', '.' or '-' (e.g. \
                         command_output), got \"{}\"",
                            crate::render::inline(&t.chars().take(60).collect::<String>())
                        ))
                    }
                },
            })
        }),
    };

pub const RETRIEVE: Tool = Tool {
    name: "retrieve_memory",
    family: Family::Detail,
    default: false,
    roles: &[Role::OpensRefs],
    spec: |_| {
        (
            "Open a stored detail by the key of its placeholder [MemoryRef: key - description]: \
             its content, a part at a time."
                .into(),
            object(
                vec![
                    ("memory_key", string("The key from the placeholder.")),
                    (
                        "offset",
                        int("Character offset to read from.", 0, i64::from(i32::MAX), 0),
                    ),
                ],
                &["memory_key"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::RefGet {
            key: a.nonempty("memory_key")?,
            offset: a.int("offset")?,
        })
    }),
};

pub const SEARCH: Tool =
    Tool {
        name: "search_memory",
        family: Family::Detail,
        default: false,
        roles: &[Role::SearchesDetails],
        spec: |_| {
            (
            "Find stored details (outputs and documents kept with store_memory or captured) by \
             what their descriptions say: their keys and descriptions, best first."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("thread_id", string("Only details stored in this conversation.")),
                ],
                &["query"],
            ),
        )
        },
        parse: Parse::Args(|a| {
            Ok(Call::DetailSearch {
                query: a.nonempty("query")?,
                thread: a.opt_text("thread_id")?.filter(|t| !t.trim().is_empty()),
            })
        }),
    };
