//! Names that models and people read and that rules compare: categories, file-path segments,
//! tags. Each must show as what it is, so that what a reader sees is what a rule matched.
//!
//! # Why
//! Consent protects categories by name (`city`), allowlists grant them by name, and a model
//! reads them in every bullet. `" city"`, `"city\u{200b}"`, `"ｃｉｔｙ"`, `"сity"` (a Cyrillic
//! `с`) and `"preferred name"` all *read* as a protected name while comparing unequal to it, so
//! an inferred write filed under one of them skipped consent. A category is therefore
//! normalised once, at the door, for every write path ([`category`]): compatibility-composed
//! (NFKC: fullwidth letters become ASCII), trimmed, spaces and `-` runs written `_`, lower
//! case; and what still cannot be read unambiguously is refused ([`legible`]): control,
//! format and zero-width characters, line separators, and letters of two scripts in one word
//! (Unicode TR 39's mixed-script test). A name in one script that is drawn like a protected
//! one (`cıty`, dotless i) is refused by the consent check ([`lookalike`]), which knows which
//! names are protected.

use crate::error::{SqlError, SqlState};
use unicode_normalization::UnicodeNormalization;
use unicode_security::MixedScript;

/// Longest category, in characters (after normalising).
pub const MAX_CATEGORY_CHARS: usize = 100;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NameError {
    #[error("{what} \"{shown}\" {reason}")]
    Illegible {
        what: &'static str,
        shown: String,
        reason: &'static str,
    },
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("{what} is {chars} characters, over the limit of {max}")]
    TooLong {
        what: &'static str,
        chars: usize,
        max: usize,
    },
    #[error("category \"{shown}\" looks like \"{protected}\" but is not spelled the same")]
    Lookalike { shown: String, protected: String },
}

impl SqlError for NameError {
    fn sqlstate(&self) -> SqlState {
        SqlState::InvalidParameterValue
    }
    fn hint(&self) -> Option<String> {
        match self {
            NameError::Lookalike { protected, .. } => Some(format!(
                "write the category as \"{protected}\" (it needs the user's consent when inferred)"
            )),
            NameError::Illegible { .. } => Some(
                "use letters of one script, digits, spaces and punctuation; no control, format or zero-width characters".into(),
            ),
            _ => None,
        }
    }
}

/// A name as an error message shows it: invisible and control characters as `\u{XXXX}`, so the
/// message itself cannot be rearranged by them.
pub fn shown(s: &str) -> String {
    s.chars()
        .take(80)
        .map(|c| {
            if !visible(c) {
                format!("\\u{{{:04X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Whether `c` shows as itself: not a control character, not a line or paragraph separator,
/// not whitespace other than the space, and not one of the format or default-ignorable
/// characters that render as nothing (zero-width spaces and joiners, bidirectional controls,
/// soft hyphen, word joiner, invisible operators, Hangul fillers, variation selectors, tags).
///
/// # Why a list
/// The standard library has no general-category lookup; these are the Cf characters and the
/// other Default_Ignorable_Code_Point ranges of Unicode 15's DerivedCoreProperties.txt.
pub fn visible(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x0600..=0x0605 | 0x06DD | 0x070F | 0x0890..=0x0891
        | 0x08E2 | 0x115F..=0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F | 0x200B..=0x200F
        | 0x2028..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0
        | 0xFFF0..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

/// Refuses what cannot be displayed unambiguously (module docs): a reason, or `Ok`.
pub fn legible(s: &str) -> Result<(), &'static str> {
    if s.chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err("contains control or line-separator characters");
    }
    if s.chars().any(|c| !visible(c)) {
        return Err("contains invisible (format or zero-width) characters");
    }
    // Word by word: `план.md` and `город_city` are two words, each in one script; `pаypal`
    // (a Cyrillic а among Latin letters) is one word in two.
    if !s
        .split(|c: char| !c.is_alphanumeric())
        .all(|w| w.is_single_script() || east_asian_with_latin(w))
    {
        return Err("mixes letters of different scripts in one word");
    }
    Ok(())
}

/// TR 39's "highly restrictive" level: besides one script, a word may be Latin with Japanese
/// (Han, Hiragana, Katakana: `Tシャツ`, `PDFファイル`), with Chinese (Han, Bopomofo) or with Korean
/// (Hangul, Han), the way those languages are written. Japanese alone is one script to TR 39
/// already (`仕事メモ` mixes Han and Katakana); what stays refused is Latin with Cyrillic or Greek,
/// where letters are drawn alike.
fn east_asian_with_latin(w: &str) -> bool {
    let rest: String = w.chars().filter(|c| !c.is_ascii_alphanumeric()).collect();
    !rest.is_empty()
        && rest.len() < w.len()
        && rest.is_single_script()
        && rest.chars().all(|c| {
            crate::language::unspaced(c) || matches!(c as u32, 0x3100..=0x312F | 0x31A0..=0x31BF | 0x1100..=0x11FF | 0x3130..=0x318F | 0x30FC)
        })
}

/// A category as every write path stores it and every rule compares it: NFKC, trimmed,
/// runs of whitespace, `-` and `_` written as one `_`, lower case; refused (22023) when empty,
/// longer than [`MAX_CATEGORY_CHARS`] or not [`legible`].
pub fn category(raw: &str) -> Result<String, NameError> {
    const WHAT: &str = "category";
    // Checked before composing: NFKC would turn some invisible characters into spaces.
    legible(raw.trim_matches(|c: char| c.is_whitespace() && !matches!(c, '\u{2028}' | '\u{2029}')))
        .map_err(|reason| NameError::Illegible {
            what: WHAT,
            shown: shown(raw),
            reason,
        })?;
    let composed: String = raw.nfkc().collect();
    let mut out = String::with_capacity(composed.len());
    let mut gap = false;
    for c in composed.trim().chars() {
        if c.is_whitespace() || c == '-' || c == '_' {
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push('_');
        }
        gap = false;
        out.extend(c.to_lowercase());
    }
    if out.is_empty() {
        return Err(NameError::Empty { what: WHAT });
    }
    let chars = out.chars().count();
    if chars > MAX_CATEGORY_CHARS {
        return Err(NameError::TooLong {
            what: WHAT,
            chars,
            max: MAX_CATEGORY_CHARS,
        });
    }
    Ok(out)
}

/// The protected name that `category` (already normalised) is drawn like without being it:
/// the same Unicode TR 39 skeleton (`cıty` and `city`), different text. Combining marks are
/// folded first: `"city\u{301}"` composes to `citý`, whose skeleton keeps the accent, and read
/// as its own name it skipped the consent that `city` needs.
pub fn lookalike<'a>(category: &str, protected: &'a [String]) -> Option<&'a String> {
    let skel = |s: &str| -> String {
        let folded: String = s
            .nfd()
            .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
            .collect();
        unicode_security::skeleton(&folded)
            .collect::<String>()
            .to_lowercase()
    };
    let mine = skel(category);
    protected
        .iter()
        .find(|p| p.as_str() != category && skel(p) == mine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_normalised_once() {
        for (raw, want) in [
            ("city", "city"),
            (" city", "city"),
            ("city ", "city"),
            ("city\t", "city"),
            ("City", "city"),
            ("ｃｉｔｙ", "city"),
            ("preferred name", "preferred_name"),
            ("Preferred-Name", "preferred_name"),
            ("preferred  -  name", "preferred_name"),
            ("language\u{a0}", "language"),
            ("город", "город"),
            ("город city", "город_city"),
            ("health", "health"),
        ] {
            assert_eq!(category(raw).as_deref(), Ok(want), "{raw:?}");
        }
    }

    #[test]
    fn what_cannot_be_read_unambiguously_is_refused() {
        for raw in [
            "city\u{200b}",
            "ci\u{200d}ty",
            "\u{202e}ytic",
            "city\u{2028}x",
            "a\nb",
            "сity", // Cyrillic es, then Latin
            "",
            "  ",
            "_-_",
        ] {
            let e = category(raw).unwrap_err();
            assert_eq!(e.sqlstate(), SqlState::InvalidParameterValue, "{raw:?}");
            assert!(!e.to_string().contains('\u{200b}'), "{e}");
        }
        assert!(category(&"a".repeat(101)).is_err());
    }

    #[test]
    fn east_asian_names_are_legible() {
        for ok in [
            "仕事メモ",
            "東京タワーの写真",
            "Tシャツ",
            "PDFファイル",
            "서울大學",
            "我的iPhone",
            "家族_りょこう",
            "план.md",
        ] {
            assert_eq!(legible(ok), Ok(()), "{ok}");
        }
        for bad in ["сity", "pаypal", "αlpha"] {
            assert!(legible(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lookalikes_of_protected_names_are_found() {
        let protected: Vec<String> = ["city", "preferred_name"].map(String::from).to_vec();
        let c = category("cıty").unwrap();
        assert_eq!(lookalike(&c, &protected).map(String::as_str), Some("city"));
        assert_eq!(lookalike("city", &protected), None);
        // A combining accent composes into another letter: still drawn like the protected name.
        let c = category("city\u{0301}").unwrap();
        assert_eq!(c, "cit\u{fd}");
        assert_eq!(lookalike(&c, &protected).map(String::as_str), Some("city"));
        assert_eq!(
            lookalike(&category("Ci\u{0300}ty").unwrap(), &protected).map(String::as_str),
            Some("city")
        );
        assert_eq!(lookalike("health", &protected), None);
    }

    #[test]
    fn shown_escapes_the_invisible() {
        assert_eq!(shown("a\u{200b}b\n"), "a\\u{200B}b\\u{000A}");
        assert!(visible('é') && visible('字') && !visible('\u{2060}'));
    }
}
