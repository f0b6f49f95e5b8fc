//! The memory instructions of a system prompt (`memory_prompt`): how core memory works, when to
//! search, how to open a `[MemoryRef: ...]` placeholder, and how to write a memory. Each part
//! names only tools the agent is offered (`super::select`), so the prompt never sends the model
//! to a tool it does not have; a part about tools it has none of is left out.

use super::{with_role, Role, ToolError};

/// The parts, in the order they are written.
pub const PARTS: [&str; 5] = ["core", "recall", "refs", "writing", "files"];

/// The first of `tools` with `role` (the one a sentence of the prompt names).
fn has(tools: &[&str], role: Role) -> Option<String> {
    with_role(tools, role).first().map(|t| t.to_string())
}

/// The instructions for an agent offered `tools`: all parts, or those named in `parts`. An
/// unknown part is an error naming the parts there are.
pub fn prompt(tools: &[&str], parts: Option<&[String]>) -> Result<String, ToolError> {
    if let Some(p) = parts {
        if let Some(bad) = p.iter().find(|x| !PARTS.contains(&x.as_str())) {
            return Err(ToolError(format!(
                "unknown part \"{bad}\"; parts are: {}",
                PARTS.join(", ")
            )));
        }
    }
    let wanted = |name: &str| parts.is_none_or(|p| p.iter().any(|x| x == name));
    let mut out: Vec<String> = vec![];
    if wanted("core") {
        let mut s = String::from(
            "## Memory\nYour core memory is the <memory_blocks> section above: it is always in \
             your context, within each block's character limit (chars_current / chars_limit).",
        );
        let edit = with_role(tools, Role::EditsBlocks);
        if edit.is_empty() {
            s.push_str(" You cannot edit it.");
        } else {
            s.push_str(&format!(
                " Keep it current with {}: when you learn something lasting about the user or \
                 yourself, write it there; when it changes, replace the old text rather than \
                 adding a contradiction.",
                edit.join(", ")
            ));
        }
        out.push(s);
    }
    if wanted("recall") {
        let mut lines = vec![];
        if let Some(t) = has(tools, Role::SearchesMemory) {
            lines.push(format!(
                "- Long-term memory holds facts beyond your core memory. Before answering about \
                 the user's past, preferences or plans, search it with {t}; each result shows \
                 the day it happened (YYYY-MM-DD), so answer \"when\" questions from those dates."
            ));
        }
        if let Some(t) = has(tools, Role::SearchesConversation) {
            lines.push(format!(
                "- Earlier messages that are no longer in your context are in recall memory: \
                 use {t} to find what was said."
            ));
        }
        let compaction = with_role(tools, Role::Compacts);
        if !compaction.is_empty() {
            lines.push(format!(
                "- When your context grows long, {} folds older messages into the summary at the \
                 top of your context (give a focus to keep what matters for the task); nothing is \
                 lost, the messages stay searchable.",
                compaction.join(" or ")
            ));
        }
        if has(tools, Role::Paged).is_some() {
            lines.push(
                "- Results come a page at a time; ask for the next page when the answer is not \
                 on this one."
                    .into(),
            );
        }
        if !lines.is_empty() {
            out.push(format!("## Searching memory\n{}", lines.join("\n")));
        }
    }
    if wanted("refs") {
        if let Some(t) = has(tools, Role::OpensRefs) {
            let mut part = format!(
                "## Stored details\nLong outputs and documents appear in your context as \
                 placeholders: [MemoryRef: <key> - <description>]. The description says what it \
                 holds. When you need the content itself, call {t} with the key; do not guess \
                 what a placeholder contains, and keep placeholders as they are when you quote \
                 them."
            );
            if let Some(s) = has(tools, Role::StoresDetails) {
                part.push_str(&format!(
                    " To keep a long text out of your context, store it with {s} and keep its \
                     placeholder instead."
                ));
            }
            if let Some(s) = has(tools, Role::SearchesDetails) {
                part.push_str(&format!(" {s} finds stored details by their descriptions."));
            }
            out.push(part);
        }
    }
    if wanted("writing") {
        if let Some(t) = has(tools, Role::WritesMemory) {
            out.push(format!(
                "## Writing memories\nWhen you store a fact with {t}, write a complete, \
                 self-contained, third-person statement with no pronouns, naming who it is about; \
                 neutral tone; one or two sentences; at most 280 characters (\"Sam is allergic to \
                 peanuts.\"). When you record what happened, use the past tense, one or two \
                 sentences on what was discussed, decided or done, leaving out stable facts unless \
                 they changed. Store one fact per call, not a transcript."
            ));
        }
        let fix = with_role(tools, Role::FixesMemory);
        if !fix.is_empty() {
            out.push(format!(
                "## Fixing memories\nWhen a memory turns out to be wrong, or the user asks you to \
                 forget something, use {}: quote the memory as a search showed it. Do not store \
                 a contradiction next to it.",
                fix.join(" or ")
            ));
        }
        let consent = with_role(tools, Role::Consents);
        if !consent.is_empty() {
            out.push(format!(
                "## Consent\nSome changes to memory wait for the user's consent (your memory \
                 header says \"awaiting consent\"); {} handle them. Ask the \
                 user in plain words; when they answer in this conversation, record their answer \
                 quoting it. Never approve or reject on your own judgement: only the user's own \
                 words count.",
                consent.join(" and ")
            ));
        }
    }
    if wanted("files") {
        if has(tools, Role::MemoryDirectory).is_some() {
            out.push(
                "## Memory directory\nA directory /memories persists between conversations. \
                 View it at the start of a task, keep notes of progress and of what you learn \
                 there with the memory tool, and keep the files short and organised."
                    .into(),
            );
        }
        let file_tools = with_role(tools, Role::ReadsFiles);
        if !file_tools.is_empty() {
            out.push(format!(
                "## Memory files\nYour memory files persist between conversations: notes, \
                 episodes/ (what happened in past runs, by day) and projects/ (roll-ups of \
                 episodes). The memory context names the most relevant files with their paths \
                 and a snippet; for more, use {}. Read a file before relying on a snippet.",
                file_tools.join(", ")
            ));
        }
        let writers = with_role(tools, Role::WritesFiles);
        if !writers.is_empty() {
            out.push(format!(
                "## Fixing files\nWhen an episode or a project file is wrong, correct it with {} \
                 (read it first; change only what is wrong).",
                writers.join(", ")
            ));
        }
    }
    Ok(out.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::DEFAULT_TOOLS;

    #[test]
    fn it_names_exactly_the_tools_offered() {
        let p = prompt(&DEFAULT_TOOLS, None).unwrap();
        for t in DEFAULT_TOOLS {
            assert!(p.contains(t), "{t} missing from:\n{p}");
        }
        for t in [
            "archival_memory_search",
            "core_memory_append",
            "memory tool",
            "/memories",
        ] {
            assert!(!p.contains(t), "{t} in:\n{p}");
        }
        // MemGPT's names: the prompt uses them.
        let memgpt = ["core_memory_append", "archival_memory_search"];
        let p = prompt(&memgpt, None).unwrap();
        assert!(p.contains("core_memory_append") && p.contains("archival_memory_search"));
        assert!(!p.contains("archival_search,") && !p.contains("memory_ref_get"));
    }

    #[test]
    fn parts_without_tools_are_left_out_and_unknown_parts_are_errors() {
        let p = prompt(&["archival_search"], None).unwrap();
        assert!(p.contains("You cannot edit it."));
        assert!(!p.contains("MemoryRef") && !p.contains("Writing memories"));
        let only = prompt(&DEFAULT_TOOLS, Some(&["refs".to_string()])).unwrap();
        assert!(only.starts_with("## Stored details") && !only.contains("## Memory\n"));
        assert!(prompt(&DEFAULT_TOOLS, Some(&["nope".to_string()]))
            .unwrap_err()
            .0
            .contains("core, recall, refs, writing, files"));
    }

    #[test]
    fn the_memory_directory_part_comes_with_the_memory_tool() {
        let p = prompt(&["memory"], None).unwrap();
        assert!(p.contains("/memories"));
        assert!(!p.contains("## Memory files"));
    }

    #[test]
    fn the_file_and_detail_tools_are_named_when_offered() {
        let p = prompt(
            &[
                "memory_file_search",
                "memory_file_read",
                "retrieve_memory",
                "store_memory",
            ],
            None,
        )
        .unwrap();
        assert!(
            p.contains("use memory_file_search, memory_file_read."),
            "{p}"
        );
        assert!(
            !p.contains("memory_file_grep") && !p.contains("memory_file_ls"),
            "{p}"
        );
        assert!(p.contains("call retrieve_memory with the key"), "{p}");
        assert!(p.contains("store it with store_memory"), "{p}");
        assert!(!p.contains("search_memory"), "{p}");
        assert!(!prompt(&DEFAULT_TOOLS, None)
            .unwrap()
            .contains("## Memory files"));
    }
}
