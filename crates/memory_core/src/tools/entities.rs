//! The entity tool: look up a person, place, organisation or project the memories are about
//! (`memory_entity`): its other names, how it relates to others ("Robert: brother of the
//! user"), and the memories about it. It runs in src/ops/tools/entities.rs.

use super::{object, string, Call, Family, Parse, Role, Tool};

pub const LOOKUP: Tool = Tool {
    name: "memory_entity",
    family: Family::Entities,
    default: false,
    roles: &[Role::SearchesMemory],
    spec: |_| {
        (
            "Look up a person, place, organisation or project you know about, by name: its other \
             names, how it relates to others (\"Robert: brother of the user\") and the memories \
             about it."
                .into(),
            object(
                vec![("name", string("The name, e.g. Robert or Acme."))],
                &["name"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let name = a.nonempty("name")?.trim().to_string();
        if name.chars().count() > crate::entities::MAX_NAME_CHARS {
            return Err(format!(
                "\"name\" must be a name of at most {} characters",
                crate::entities::MAX_NAME_CHARS
            ));
        }
        Ok(Call::Entity { name })
    }),
};
