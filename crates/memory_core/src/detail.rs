//! Layer-2 detail memory (docs/design.md "Detail memory"): keys, placeholders, and the one-line context entry that
//! `memory_capture` puts in a conversation instead of a large command output.
//!
//! Everything here is deterministic: the same output always gives the same status and salient
//! lines, so an agent's context does not depend on whether an LLM was reachable (the LLM, when
//! configured, only rewrites the description part; see `src/ops/detail.rs`).

/// Longest key base derived from a description, in characters (keys stay readable in a prompt).
pub const MAX_SLUG_CHARS: usize = 40;

/// Longest description kept in a placeholder, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 200;

/// Whether `t` can be a detail's type: 1-50 letters, digits, `_`, `.` or `-`
/// (`command_output`, `file_content`).
pub fn valid_type(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 50
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Characters per stored chunk of detail content (memory.detail_chunks): a page read touches
/// one or two chunks of at most 256 KB, wherever it is in the content.
pub const CHUNK_CHARS: usize = 65_536;

/// `content` cut into chunks of [`CHUNK_CHARS`] characters (the last one shorter; one empty chunk
/// for empty content, so that every detail has chunk 0).
pub fn chunks(content: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(content.len() / CHUNK_CHARS + 1);
    let mut start = 0;
    let mut count = 0;
    for (i, _) in content.char_indices() {
        if count == CHUNK_CHARS {
            out.push(content[start..i].to_string());
            start = i;
            count = 0;
        }
        count += 1;
    }
    out.push(content[start..].to_string());
    out
}

/// The readable base of a key: the description's first words, lower-cased ASCII letters and
/// digits joined by `_` (`"npm install log"` → `npm_install_log`). `None` when the description
/// has no such characters (e.g. only CJK text): the caller then uses a UUID.
pub fn slug(description: &str) -> Option<String> {
    let mut out = String::new();
    for word in description
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = word.to_ascii_lowercase();
        let sep = usize::from(!out.is_empty());
        if out.len() + sep + w.len() > MAX_SLUG_CHARS {
            if out.is_empty() {
                out = w.chars().take(MAX_SLUG_CHARS).collect();
            }
            break;
        }
        if sep == 1 {
            out.push('_');
        }
        out.push_str(&w);
    }
    (!out.is_empty()).then_some(out)
}

/// A key for the `n`-th store with the same base (`n` = 1 is the base itself): `base`,
/// `base_2`, `base_3` ...
pub fn numbered(base: &str, n: u32) -> String {
    if n <= 1 {
        base.to_string()
    } else {
        format!("{base}_{n}")
    }
}

/// A description fit for a one-line placeholder: whitespace collapsed, at most
/// [`MAX_DESCRIPTION_CHARS`], no `]` (which would end the placeholder early).
pub fn clean_description(description: &str) -> String {
    let d = crate::text::normalize(&description.replace(']', ")"));
    if d.chars().count() <= MAX_DESCRIPTION_CHARS {
        d
    } else {
        let mut s: String = d.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
        s.push('…');
        s
    }
}

/// How a placeholder starts.
const PLACEHOLDER_OPEN: &str = "[MemoryRef: ";

/// `[MemoryRef: <key> - <description>]` (the Layer-1 entry of docs/design.md "Detail memory").
pub fn placeholder(key: &str, description: &str) -> String {
    format!("{PLACEHOLDER_OPEN}{key} - {description}]")
}

/// Every `[MemoryRef: <key> - <description>]` placeholder in `texts`, in order of first
/// appearance, each once (as [`placeholder`] writes them).
pub fn placeholders(texts: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for t in texts {
        let mut rest = *t;
        while let Some(start) = rest.find(PLACEHOLDER_OPEN) {
            let from = &rest[start..];
            let Some(end) = from.find(']') else { break };
            let p = &from[..=end];
            if !found.iter().any(|f| f == p) {
                found.push(p.to_string());
            }
            rest = &from[end + 1..];
        }
    }
    found
}

/// What a command's output says about how it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `Success`, `Failed`, `Failed (exit code N)` or `Completed with warnings`.
    pub status: String,
    /// Up to [`MAX_SALIENT`] lines worth reading first: error lines, else warnings, else the
    /// last line of output. Each trimmed to [`MAX_SALIENT_CHARS`].
    pub salient: Vec<String>,
    pub lines: usize,
}

pub const MAX_SALIENT: usize = 3;
pub const MAX_SALIENT_CHARS: usize = 160;

const ERROR_WORDS: [&str; 12] = [
    "error",
    "errors",
    "err",
    "failures",
    "failed",
    "failure",
    "fatal",
    "panic",
    "exception",
    "traceback",
    "denied",
    "cannot",
];
const WARNING_WORDS: [&str; 2] = ["warning", "warn"];

/// Whether `line` contains one of `words` as a whole word (case-insensitive), so that
/// `0 errors` and `error-free` still count but `terrorism` does not.
fn has_word(line: &str, words: &[&str]) -> bool {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| words.iter().any(|x| w.eq_ignore_ascii_case(x)))
}

/// "0 errors", "no errors", "without errors": a line that mentions errors to say there were none.
fn says_none(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    [
        "0 error",
        "no error",
        "without error",
        "0 failed",
        "0 failure",
    ]
    .iter()
    .any(|p| l.contains(p))
}

/// The exit code a line reports (`exit code 2`, `exited with code 1`, `exit status 127`).
fn exit_code(line: &str) -> Option<i64> {
    let l = line.to_ascii_lowercase();
    for marker in ["exit code", "exited with code", "exit status", "exit_code"] {
        if let Some(p) = l.find(marker) {
            let rest = l[p + marker.len()..].trim_start_matches([' ', ':', '=']);
            let digits: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

fn clip(line: &str) -> String {
    let t = line.trim();
    if t.chars().count() <= MAX_SALIENT_CHARS {
        t.to_string()
    } else {
        let mut s: String = t.chars().take(MAX_SALIENT_CHARS - 1).collect();
        s.push('…');
        s
    }
}

/// Reads an output the way a person skims a log: exit code, error lines, warnings.
pub fn outcome(output: &str) -> Outcome {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut code = None;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for l in &lines {
        if let Some(c) = exit_code(l) {
            code = Some(c);
        }
        if has_word(l, &ERROR_WORDS) && !says_none(l) {
            errors.push(*l);
        } else if has_word(l, &WARNING_WORDS) {
            warnings.push(*l);
        }
    }
    let status = match code {
        Some(c) if c != 0 => format!("Failed (exit code {c})"),
        Some(_) if errors.is_empty() && warnings.is_empty() => "Success".to_string(),
        _ if !errors.is_empty() => "Failed".to_string(),
        _ if !warnings.is_empty() => "Completed with warnings".to_string(),
        _ => "Success".to_string(),
    };
    let pick: Vec<&str> = if !errors.is_empty() {
        errors
    } else if !warnings.is_empty() {
        warnings
    } else {
        lines.last().copied().into_iter().collect()
    };
    Outcome {
        status,
        salient: pick.iter().take(MAX_SALIENT).map(|l| clip(l)).collect(),
        lines: lines.len(),
    }
}

/// The one-line context entry of docs/design.md "Detail memory": `Command '<command>' executed. Output stored in
/// [MemoryRef: <key> - <description>]. Status: <status>. Key lines: "..." | "..."`.
pub fn capture_line(command: &str, placeholder: &str, o: &Outcome) -> String {
    let cmd = crate::text::normalize(command).replace('\'', "\"");
    let mut s = format!(
        "Command '{cmd}' executed. Output stored in {placeholder}. Status: {}.",
        o.status
    );
    if !o.salient.is_empty() {
        let lines: Vec<String> = o
            .salient
            .iter()
            .map(|l| format!("\"{}\"", crate::text::normalize(l)))
            .collect();
        s.push_str(" Key lines: ");
        s.push_str(&lines.join(" | "));
    }
    s
}

/// The description `memory_capture` stores an output under when the LLM gives none.
pub fn capture_description(command: &str, o: &Outcome) -> String {
    let cmd: String = crate::text::normalize(command).chars().take(80).collect();
    format!("output of '{cmd}' ({} lines, {})", o.lines, o.status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("npm install log").as_deref(), Some("npm_install_log"));
        assert_eq!(
            slug("  Output of 'cargo build --release' (12 lines) ").as_deref(),
            Some("output_of_cargo_build_release_12_lines")
        );
        assert_eq!(slug("日本語"), None);
        assert_eq!(slug("--"), None);
        let long = slug(&"word ".repeat(30)).unwrap();
        assert!(long.len() <= MAX_SLUG_CHARS, "{long}");
        assert!(!long.ends_with('_'));
        let one = slug(&"x".repeat(100)).unwrap();
        assert_eq!(one.len(), MAX_SLUG_CHARS);
        assert_eq!(numbered("cmd_log", 1), "cmd_log");
        assert_eq!(numbered("cmd_log", 3), "cmd_log_3");
    }

    #[test]
    fn chunking_by_characters() {
        assert_eq!(chunks(""), vec![""]);
        assert_eq!(chunks("abc"), vec!["abc"]);
        let s = "é".repeat(CHUNK_CHARS * 2 + 5);
        let c = chunks(&s);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].chars().count(), CHUNK_CHARS);
        assert_eq!(c[2].chars().count(), 5);
        assert_eq!(c.concat(), s);
        assert_eq!(chunks(&"x".repeat(CHUNK_CHARS)).len(), 1);
    }

    #[test]
    fn descriptions_and_placeholders() {
        assert_eq!(clean_description(" a\n b] c "), "a b) c");
        assert_eq!(
            clean_description(&"é".repeat(300)).chars().count(),
            MAX_DESCRIPTION_CHARS
        );
        assert_eq!(
            placeholder("cmd_log_123", "npm install"),
            "[MemoryRef: cmd_log_123 - npm install]"
        );
    }

    #[test]
    fn outcomes() {
        let ok =
            outcome("added 120 packages\naudited 121 packages in 3s\n\nfound 0 vulnerabilities\n");
        assert_eq!(ok.status, "Success");
        assert_eq!(ok.salient, vec!["found 0 vulnerabilities"]);
        assert_eq!(ok.lines, 3);

        let bad = outcome("Compiling x\nerror[E0425]: cannot find value `y`\n  --> src/main.rs:3\nerror: aborting due to 1 previous error\n");
        assert_eq!(bad.status, "Failed");
        assert_eq!(bad.salient.len(), 2);
        assert!(bad.salient[0].starts_with("error[E0425]"));

        let code = outcome("running\nProcess exited with code 2\n");
        assert_eq!(code.status, "Failed (exit code 2)");
        assert_eq!(outcome("done\nexit code: 0").status, "Success");
        assert_eq!(
            outcome("Build finished with 0 errors\n").status,
            "Success",
            "a line saying there were no errors is not an error line"
        );
        let warn = outcome("npm WARN deprecated x@1\nadded 3 packages");
        assert_eq!(warn.status, "Completed with warnings");
        assert_eq!(warn.salient, vec!["npm WARN deprecated x@1"]);
        assert!(!has_word("terrorism", &ERROR_WORDS));
        assert_eq!(outcome("ok\nnpm ERR! code ERESOLVE\n").status, "Failed");
        let many = outcome(&"error: x\n".repeat(10));
        assert_eq!(many.salient.len(), MAX_SALIENT);
        let long = outcome(&format!("error: {}", "z".repeat(500)));
        assert_eq!(long.salient[0].chars().count(), MAX_SALIENT_CHARS);
        assert_eq!(outcome("").lines, 0);
    }

    #[test]
    fn capture_lines_are_one_line() {
        let o = outcome("step 1\nerror: disk full\n");
        let line = capture_line(
            "npm\ninstall",
            &placeholder("npm_install", "output of 'npm install'"),
            &o,
        );
        assert_eq!(
            line,
            "Command 'npm install' executed. Output stored in [MemoryRef: npm_install - output of 'npm install']. Status: Failed. Key lines: \"error: disk full\""
        );
        assert!(!line.contains('\n'));
        assert_eq!(
            capture_description("npm install", &o),
            "output of 'npm install' (2 lines, Failed)"
        );
    }
}
