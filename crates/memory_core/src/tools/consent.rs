//! Consent by chat: the changes waiting for the user (`memory_proposals`) and the user's answer
//! (`memory_consent`). The model only reports the answer: src/ops/tools/consent.rs reads the
//! user's own messages in the call's thread, written after the proposal, and acts on what they
//! say (crate::consent::answer), never on the model's word alone.

use super::{object, string, Call, Family, Parse, Role, Tool};

pub const PROPOSALS: Tool = Tool {
    name: "memory_proposals",
    family: Family::Consent,
    default: false,
    roles: &[Role::Consents],
    spec: |_| {
        (
            "List the changes to memory that wait for the user's consent, with their ids. Ask \
             the user about one in your own words before recording their answer."
                .into(),
            object(vec![], &[]),
        )
    },
    parse: Parse::Args(|_| Ok(Call::Proposals)),
};

pub const CONSENT: Tool = Tool {
    name: "memory_consent",
    family: Family::Consent,
    default: false,
    roles: &[Role::Consents],
    spec: |_| {
        (
            "Record the user's answer to a proposed change, once the user has answered in this \
             conversation. Only the user's own words count: never answer for them."
                .into(),
            object(
                vec![
                    ("proposal_id", string("The proposal's id, from memory_proposals.")),
                    (
                        "answer",
                        string("The user's answer, quoted from their message (e.g. \"yes, update it\")."),
                    ),
                ],
                &["proposal_id", "answer"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        let id = a.nonempty("proposal_id")?;
        let id = id.trim();
        if crate::request::is_uuid(id) {
            Ok(Call::Consent {
                proposal: id.to_lowercase(),
                answer: a.nonempty("answer")?,
            })
        } else {
            Err(format!(
                "\"proposal_id\" must be a proposal's id as memory_proposals lists it, got \"{}\"",
                crate::render::inline(id)
            ))
        }
    }),
};
