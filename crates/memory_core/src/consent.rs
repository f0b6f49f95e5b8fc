//! Consent (docs/api.md "Consent"; seed 003 §10): which inferred changes wait for the user.
//!
//! A memory's "field" is its category. A change to a sensitive field (name, pronouns, city,
//! language by default) that was inferred — by extraction, or by an agent writing with
//! `"source": "inferred"` — becomes a proposal the user approves or rejects; a benign field
//! (tone, goals) is written once a second inferred signal says the same. What the user states
//! (`"source": "user"`, or no source) is written as it always was.

/// Seed 003 §10: "preferred_name, pronouns, city, language → require consent".
pub const DEFAULT_CONSENT: &str = "preferred_name,pronouns,city,language";
/// Seed 003 §10: "tone, goals_add → auto-apply if corroborated by ≥ 2 signals".
pub const DEFAULT_CORROBORATE: &str = "tone,goals";
/// Signals a benign field needs before it is written.
pub const CORROBORATING_SIGNALS: i32 = 2;
/// Days a proposal waits for a decision.
pub const PROPOSAL_DAYS: i32 = 7;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Written only on memory_approve.
    Consent,
    /// Written when corroborated.
    Corroborate,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Consent => "consent",
            Policy::Corroborate => "corroborate",
        }
    }
}

/// A comma-separated list of categories (a setting), lower case, blanks dropped.
pub fn categories(setting: &str) -> Vec<String> {
    setting
        .split(',')
        .map(|c| c.trim().to_lowercase())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The policy a write falls under: none unless it was inferred and its category is listed.
pub fn policy(
    source: Option<&str>,
    category: Option<&str>,
    consent: &[String],
    corroborate: &[String],
) -> Option<Policy> {
    if source != Some("inferred") {
        return None;
    }
    let c = category?.to_lowercase();
    if consent.contains(&c) {
        Some(Policy::Consent)
    } else if corroborate.contains(&c) {
        Some(Policy::Corroborate)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inferred_listed_fields_wait() {
        let (a, b) = (categories(DEFAULT_CONSENT), categories(" Tone , goals,,"));
        assert_eq!(b, vec!["tone", "goals"]);
        assert_eq!(
            policy(Some("inferred"), Some("City"), &a, &b),
            Some(Policy::Consent)
        );
        assert_eq!(
            policy(Some("inferred"), Some("tone"), &a, &b),
            Some(Policy::Corroborate)
        );
        assert_eq!(policy(Some("user"), Some("city"), &a, &b), None);
        assert_eq!(policy(None, Some("city"), &a, &b), None);
        assert_eq!(policy(Some("inferred"), Some("health"), &a, &b), None);
        assert_eq!(policy(Some("inferred"), None, &a, &b), None);
    }
}
