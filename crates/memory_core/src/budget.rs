//! The hard token budget of a retrieval (docs/api.md: "header + item texts never exceed it").

use crate::tokens::Encoding;

/// What fits: how many of the ranked items, the header as it may be shortened, and the tokens
/// used by both.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub header: Option<String>,
    pub items: usize,
    pub used_tokens: usize,
}

/// Keeps the header (dropping its bullets from the oldest, then all of it, if even that is too
/// much) and then as many items, in rank order, as fit; the lowest-ranked go first. Counting is
/// per piece, each piece as it is returned, and the sum never exceeds `budget`.
pub fn fit(enc: Encoding, budget: usize, header: Option<&str>, items: &[&str]) -> Fit {
    let mut header = header.map(str::to_string);
    let mut used = 0;
    while let Some(h) = &header {
        let n = enc.count(h);
        if n <= budget {
            used = n;
            break;
        }
        // Drop the oldest bullet; a header without bullets is no header.
        let mut lines: Vec<&str> = h.lines().collect();
        if lines.len() > 2 {
            lines.remove(1);
            header = Some(lines.join("\n"));
        } else {
            header = None;
        }
    }
    let mut kept = 0;
    for it in items {
        let n = enc.count(it);
        if used + n > budget {
            break;
        }
        used += n;
        kept += 1;
    }
    Fit {
        header,
        items: kept,
        used_tokens: used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_exceeds_and_drops_lowest_ranked() {
        let enc = Encoding::Cl100kBase;
        let items = [
            "[tasks] Deploy on Friday",
            "[tasks] Write the migration",
            "[projects] memory_ext",
        ];
        let all: usize = items.iter().map(|i| enc.count(i)).sum();
        let f = fit(enc, all, None, &items);
        assert_eq!((f.items, f.used_tokens), (3, all));
        let f = fit(enc, all - 1, None, &items);
        assert_eq!(f.items, 2);
        assert!(f.used_tokens < all);
        assert_eq!(fit(enc, 0, None, &items).items, 0);
    }

    #[test]
    fn header_shrinks_before_it_breaks_the_budget() {
        let enc = Encoding::Cl100kBase;
        let h = "Memory updates since rev 1:\n- +created: A fact (imp=2)\n- ↑updated: Another fact";
        let full = enc.count(h);
        let f = fit(enc, full, Some(h), &[]);
        assert_eq!(f.header.as_deref(), Some(h));
        let f = fit(enc, full - 1, Some(h), &[]);
        assert_eq!(
            f.header.as_deref(),
            Some("Memory updates since rev 1:\n- ↑updated: Another fact")
        );
        assert!(f.used_tokens < full);
        assert_eq!(fit(enc, 3, Some(h), &[]).header, None);
    }
}
