//! Write-time dedupe (docs/api.md memory_write): exact duplicates are a no-op, near duplicates update
//! the existing memory, close neighbours get a relation edge.
//!
//! # Why a guard on top of the threshold
//! Measured on the LoCoMo dev split with all-MiniLM-L6-v2 (nearest-neighbour cosine between
//! turns of one conversation: p50 0.729, p75 0.788, p90 0.840, p95 0.867, p99 0.930, p99.5
//! 0.947), the closest pairs are paraphrases ("I'm putting together an LGBTQ art show next
//! month" / "Next month I'm having an LGBTQ art show", 0.957), but they also include "Bye
//! Joanna!" / "Bye Nate!" at 0.993: the model barely sees names and numbers. So a near
//! duplicate must also agree on its distinguishing tokens (numbers, and capitalised words not
//! at the start of a sentence) before it may replace the other; otherwise it is only linked.
//!
//! # Scripts without letter case
//! Chinese, Japanese, Arabic, Hebrew, Thai or Hindi write a name like any other word, so
//! capitals find none of them, and two different Chinese turns at a merge-level cosine had no
//! distinguishing token to disagree on: with all-MiniLM-L6-v2, which reads Chinese poorly
//! (nearest-neighbour cosines p50 0.897, p95 0.960 on a translated LoCoMo conversation), one
//! turn in twelve would have replaced another. In those scripts every word is distinguishing:
//! such texts merge only when their words are the same (punctuation and Latin-script words
//! around them aside), and a rewording is linked, never merged.

/// Numbers and mid-sentence capitalised words, lower-cased, in order: "Writer 1 wrote fact 0"
/// and "Writer 0 wrote fact 1" have the same tokens as a set but say different things.
pub fn distinguishing_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let word: String = raw.chars().filter(|c| c.is_alphanumeric()).collect();
        if word.chars().any(uncased) {
            out.push(word.to_lowercase());
        } else if !word.is_empty() {
            let has_digit = word.chars().any(|c| c.is_ascii_digit());
            let capital = word.chars().next().is_some_and(char::is_uppercase);
            // "I" and its contractions are capitalised but name nobody.
            let pronoun = matches!(word.as_str(), "I" | "Im" | "Ive" | "Ill" | "Id");
            if has_digit || (capital && !sentence_start && !pronoun) {
                out.push(word.to_lowercase());
            }
        }
        sentence_start = raw.ends_with(['.', '!', '?', ':', ';']);
    }
    out
}

/// A letter of a script without case (Han, Kana, Arabic, Hebrew, Thai, Devanagari, ...).
fn uncased(c: char) -> bool {
    c.is_alphabetic() && !c.is_uppercase() && !c.is_lowercase()
}

/// Whether two near-identical texts can be the same fact (see the module note).
pub fn same_fact(a: &str, b: &str) -> bool {
    distinguishing_tokens(a) == distinguishing_tokens(b)
}

/// A memory near the one being written.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbour {
    pub id: String,
    pub similarity: f32,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// Update this memory instead of creating one.
    pub merge_into: Option<String>,
    /// Relation edges to create: (id, strength), strongest first.
    pub links: Vec<(String, f32)>,
}

/// Most edges one write creates (docs/design.md "Relations": the top neighbours).
pub const MAX_LINKS: usize = 3;

/// What to do with a new text given its nearest neighbours (any order).
pub fn decide(
    text: &str,
    neighbours: &[Neighbour],
    merge_threshold: f32,
    link_threshold: f32,
) -> Decision {
    let mut sorted: Vec<&Neighbour> = neighbours.iter().collect();
    sorted.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    let merge_into = sorted
        .iter()
        .find(|n| n.similarity >= merge_threshold && same_fact(text, &n.text))
        .map(|n| n.id.clone());
    let links = sorted
        .iter()
        .filter(|n| n.similarity >= link_threshold && Some(&n.id) != merge_into.as_ref())
        .take(MAX_LINKS)
        .map(|n| (n.id.clone(), n.similarity.clamp(0.0, 1.0)))
        .collect();
    Decision { merge_into, links }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: &str, s: f32, t: &str) -> Neighbour {
        Neighbour {
            id: id.into(),
            similarity: s,
            text: t.into(),
        }
    }

    #[test]
    fn tokens() {
        let t = distinguishing_tokens("Yay! Next month I'm having an LGBTQ art show in May 2024.");
        assert_eq!(
            t,
            vec!["lgbtq".to_string(), "may".to_string(), "2024".to_string()]
        );
        assert!(same_fact(
            "I'm putting together an LGBTQ art show next month",
            "Yay! Next month I'm having an LGBTQ art show"
        ));
        assert!(!same_fact("Bye Joanna!", "Bye Nate!"));
        assert!(!same_fact("Ana is 34", "Ana is 35"));
        assert!(!same_fact(
            "Writer 1 wrote fact 0 about Orion.",
            "Writer 0 wrote fact 1 about Orion."
        ));
    }

    #[test]
    fn uncased_scripts_agree_word_for_word() {
        // Two names in Chinese look like any other word: not the same fact.
        assert!(!same_fact("吉娜去了巴黎。", "玛丽亚去了巴黎。"));
        assert!(!same_fact("Gina: 商店经营得不错", "Gina: 生意怎么样？"));
        assert!(!same_fact("سارة تسكن في لشبونة", "مريم تسكن في لشبونة"));
        // The same words with other punctuation are.
        assert!(same_fact(
            "Gina: 商店经营得不错！",
            "Gina: 商店经营得不错。"
        ));
        // Cased scripts are read as before: Cyrillic has capitals.
        assert!(!same_fact("Я живу с Анной", "Я живу с Марией"));
        assert!(same_fact("я живу в Лиссабоне", "Я живу в Лиссабоне."));
    }

    #[test]
    fn decisions() {
        let d = decide(
            "Ana prefers green tea",
            &[
                n("a", 0.97, "Ana prefers green tea."),
                n("b", 0.85, "Ana likes tea"),
                n("c", 0.5, "x"),
            ],
            0.95,
            0.80,
        );
        assert_eq!(d.merge_into.as_deref(), Some("a"));
        assert_eq!(d.links, vec![("b".to_string(), 0.85)]);
        // Above the merge threshold but a different name: linked, not merged.
        let d = decide("Bye Nate!", &[n("a", 0.99, "Bye Joanna!")], 0.95, 0.80);
        assert_eq!(d.merge_into, None);
        assert_eq!(d.links, vec![("a".to_string(), 0.99)]);
        let many: Vec<Neighbour> = (0..6)
            .map(|i| n(&i.to_string(), 0.81 + i as f32 / 100.0, "t"))
            .collect();
        assert_eq!(decide("t", &many, 0.99, 0.8).links.len(), MAX_LINKS);
    }
}
