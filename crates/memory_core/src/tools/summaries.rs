//! The summaries tool: read a summary the worker keeps (`memory_summary`): the user's profile,
//! an entity's or a project's, or one the application defined (docs/api.md "Summaries"); with
//! no name, the list of them. It runs in src/ops/tools/summaries.rs.

use super::{object, string, Call, Family, Parse, Role, Tool};

pub const READ: Tool = Tool {
    name: "memory_summary",
    family: Family::Summaries,
    default: false,
    roles: &[Role::SearchesMemory],
    spec: |_| {
        (
            "Read a summary of what you remember, kept current in the background: \"profile\" \
             (who the user is and where they stand now), \"entity:<name>\" (a person, place or \
             thing), \"project:<name>\", or another the application defined. Without a name, \
             list the summaries there are."
                .into(),
            object(
                vec![(
                    "name",
                    string("The summary's name, e.g. profile or entity:Robert; omit to list them."),
                )],
                &[],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let name = a
            .opt_text("name")?
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty());
        if let Some(n) = &name {
            if let Err(e) = crate::summaries::name(Some(n)) {
                return Err(e.to_string().replacen("name", "\"name\"", 1));
            }
        }
        Ok(Call::Summary { name })
    }),
};
