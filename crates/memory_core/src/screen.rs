//! Screening: what in a text is a secret or personal data, found before anything is stored,
//! embedded or sent to a model (docs/api.md "Screening"). Each detector has a name, which a
//! policy, an event and a redaction (`[REDACTED:<name>]`) use.
//!
//! Detectors match a candidate shape and then check what the shape alone cannot: a card number's
//! Luhn digit, an IBAN's checksum and length (`iban_validate`), a phone number's validity for its
//! region (`phonenumber`, Google's libphonenumber data), an SSN's unassigned ranges, a DNI's
//! letter, a token's entropy. Shapes a user writes every day (dates, versions, UUIDs, commit
//! hashes, order numbers) must pass untouched: the labelled set in `screen_cases` holds them.

use regex::Regex;
use std::sync::LazyLock;

/// What a detector finds, by family: the family is what a policy names by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Secret,
    PaymentCard,
    Iban,
    NationalId,
    Email,
    Phone,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Secret => "secret",
            Family::PaymentCard => "payment_card",
            Family::Iban => "iban",
            Family::NationalId => "national_id",
            Family::Email => "email",
            Family::Phone => "phone",
        }
    }
}

/// One finding: the detector, its family, and the byte span of `text` to redact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub detector: &'static str,
    pub family: Family,
    pub start: usize,
    pub end: usize,
}

/// A detector: a name, a family, a candidate pattern (the capture group `v`, when present, is
/// the span to redact; else the whole match) and a check of the candidate.
struct Detector {
    name: &'static str,
    family: Family,
    pattern: &'static str,
    check: fn(&str, &str) -> bool,
}

fn always(_: &str, _: &str) -> bool {
    true
}

// Word boundaries are ASCII ones, `(?-u:\b)`: with Unicode's, a number or an address written
// against Japanese or Chinese text ("電話は090-1234-5678です") has no boundary (both sides are
// word characters) and was never a candidate.
const DETECTORS: &[Detector] = &[
    // Private keys first: a key block contains base64 runs that other detectors would split.
    Detector {
        name: "private_key",
        family: Family::Secret,
        pattern: r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",
        check: always,
    },
    Detector {
        name: "anthropic_key",
        family: Family::Secret,
        pattern: r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}",
        check: always,
    },
    Detector {
        name: "openai_key",
        family: Family::Secret,
        pattern: r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        check: mixed_token,
    },
    Detector {
        name: "aws_access_key",
        family: Family::Secret,
        pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        check: always,
    },
    Detector {
        name: "github_token",
        family: Family::Secret,
        pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        check: always,
    },
    Detector {
        name: "gitlab_token",
        family: Family::Secret,
        pattern: r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}",
        check: always,
    },
    Detector {
        name: "slack_token",
        family: Family::Secret,
        pattern: r"(?-u:\b)xox[abposr]-[A-Za-z0-9\-]{10,}",
        check: always,
    },
    Detector {
        name: "stripe_key",
        family: Family::Secret,
        pattern: r"(?-u:\b)(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        check: always,
    },
    Detector {
        name: "google_api_key",
        family: Family::Secret,
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
        check: always,
    },
    Detector {
        name: "huggingface_token",
        family: Family::Secret,
        pattern: r"(?-u:\b)hf_[A-Za-z0-9]{30,}",
        check: always,
    },
    Detector {
        name: "jwt",
        family: Family::Secret,
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        check: always,
    },
    Detector {
        name: "bearer_token",
        family: Family::Secret,
        pattern: r"(?i)(?-u:\b)bearer\s+(?P<v>[A-Za-z0-9._~+/\-]{16,}=*)",
        check: mixed_token,
    },
    Detector {
        name: "url_password",
        family: Family::Secret,
        pattern: r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s/:@]{1,64}:(?P<v>[^\s/@]{1,128})@",
        check: always,
    },
    Detector {
        name: "password",
        family: Family::Secret,
        pattern: r#"(?i)(?-u:\b)(?:password|passwd|passphrase|passcode|pwd)(?-u:\b)(?:\s+(?:for|of|to|on|at)(?:\s+[\w'\-]{1,40}){1,4}?)?\s*(?:is|was|:|=|->)\s*["'`]?(?P<v>[^\s"'`]{3,128})"#,
        check: password_value,
    },
    Detector {
        name: "keyword_token",
        family: Family::Secret,
        pattern: r#"(?i)(?-u:\b)(?:secret|token|api[_\- ]?key|access[_\- ]?key|auth[_\- ]?key|client[_\- ]?secret|private[_\- ]?key)(?-u:\b)\s*(?:is|:|=|->)?\s*["'`]?(?P<v>[A-Za-z0-9+/_=\-.]{20,})"#,
        check: high_entropy,
    },
    // National ids with a structure of their own before cards: an 18-digit Chinese id or a
    // French NIR can pass a card's Luhn check by chance.
    Detector {
        name: "cn_resident_id",
        family: Family::NationalId,
        pattern: r"(?-u:\b)\d{17}[\dXx](?-u:\b)",
        check: cn_resident_id,
    },
    Detector {
        name: "fr_nir",
        family: Family::NationalId,
        pattern: r"(?-u:\b)[1-478] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?-u:\b)",
        check: fr_nir,
    },
    Detector {
        name: "payment_card",
        family: Family::PaymentCard,
        pattern: r"(?-u:\b)(?:\d[ \-]?){12,18}\d(?-u:\b)",
        check: card,
    },
    Detector {
        name: "iban",
        family: Family::Iban,
        pattern: r"(?-u:\b)[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?-u:\b)",
        check: iban,
    },
    Detector {
        name: "us_ssn",
        family: Family::NationalId,
        pattern: r"(?-u:\b)\d{3}-\d{2}-\d{4}(?-u:\b)",
        check: us_ssn,
    },
    Detector {
        name: "uk_nino",
        family: Family::NationalId,
        pattern: r"(?-u:\b)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?-u:\b)",
        check: uk_nino,
    },
    Detector {
        name: "es_dni",
        family: Family::NationalId,
        pattern: r"(?-u:\b)[XYZ]?\d{7,8}-?[A-Z](?-u:\b)",
        check: es_dni,
    },
    // A CPF written as Brazil writes it, or eleven digits after the word.
    Detector {
        name: "br_cpf",
        family: Family::NationalId,
        pattern: r"(?-u:\b)(?:\d{3}\.\d{3}\.\d{3}-\d{2}|(?i:cpf)\W{0,3}(?P<v>\d{11}))(?-u:\b)",
        check: br_cpf,
    },
    Detector {
        name: "it_codice_fiscale",
        family: Family::NationalId,
        pattern: r"(?-u:\b)[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z](?-u:\b)",
        check: it_codice_fiscale,
    },
    // Eleven and twelve plain digits are too common (phone numbers, order numbers) to be ids
    // on their checksum alone: the German tax id and Japan's My Number only after their names.
    Detector {
        name: "de_tax_id",
        family: Family::NationalId,
        pattern: r"(?i)(?:steuer-?id(?:entifikationsnummer)?|steuer-?identifikations-?nummer|idnr\.?|tax id)\D{0,12}(?P<v>\d{2} ?\d{3} ?\d{3} ?\d{3})(?-u:\b)",
        check: de_tax_id,
    },
    Detector {
        name: "jp_my_number",
        family: Family::NationalId,
        pattern: r"(?:マイナンバー|個人番号|(?i:my ?number))\D{0,5}(?P<v>\d{4}[ \-]?\d{4}[ \-]?\d{4})(?-u:\b)",
        check: jp_my_number,
    },
    Detector {
        name: "ca_sin",
        family: Family::NationalId,
        pattern: r"(?-u:\b)\d{3}[ \-]\d{3}[ \-]\d{3}(?-u:\b)",
        check: ca_sin,
    },
    Detector {
        name: "email",
        family: Family::Email,
        pattern: r"(?-u:\b)[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})*\.[A-Za-z]{2,24}(?-u:\b)",
        check: always,
    },
    Detector {
        name: "phone",
        family: Family::Phone,
        pattern: r"(?:\+|\(|(?-u:\b))\d[\d ().\-]{6,18}\d(?-u:\b)",
        check: phone,
    },
];

static COMPILED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    DETECTORS
        .iter()
        .map(|d| Regex::new(d.pattern).expect("detector patterns are valid"))
        .collect()
});

/// Whether the digits at `start` are the fraction of a decimal number (`0.38495983759484487`, a
/// random version LangGraph writes): a card number is not written after a decimal point.
fn decimal_fraction(text: &str, start: usize) -> bool {
    let before = &text.as_bytes()[..start];
    matches!(before, [.., d, b'.'] if d.is_ascii_digit())
}

/// Every finding in `text`, in order of position; overlapping findings are resolved in favour
/// of the earlier detector in the list (secrets before numbers, numbers before phones).
pub fn scan(text: &str) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    // The country whose national phone format the text may use: its language's
    // (crate::language; a German text's "030 12345678" is a Berlin number). Read only for a
    // number that looks like a phone's and is not one in the international form: detection
    // reads the whole text (~35 µs of a store put whose value had any digit, by perf).
    let region = std::cell::OnceCell::new();
    let region = || *region.get_or_init(|| crate::language::detect(text).and_then(region_of));
    for (d, re) in DETECTORS.iter().zip(COMPILED.iter()) {
        for c in re.captures_iter(text) {
            let whole = c.get(0).expect("group 0");
            let m = c.name("v").unwrap_or(whole);
            // A value that ends a sentence: the full stop or comma is the sentence's.
            let v = m.as_str().trim_end_matches(['.', ',', ';', ')']);
            let (start, end) = (m.start(), m.start() + v.len());
            let ok = if d.family == Family::Phone {
                phone(v, whole.as_str()) || national_phone(v, region())
            } else {
                (d.check)(v, whole.as_str())
            };
            if v.is_empty() || !ok {
                continue;
            }
            if d.family == Family::PaymentCard && decimal_fraction(text, start) {
                continue;
            }
            if found.iter().any(|f| start < f.end && f.start < end) {
                continue;
            }
            found.push(Finding {
                detector: d.name,
                family: d.family,
                start,
                end,
            });
        }
    }
    found.sort_by_key(|f| f.start);
    found
}

/// `text` with each of `findings` replaced by `[REDACTED:<detector>]`.
pub fn redact(text: &str, findings: &[&Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut sorted: Vec<&&Finding> = findings.iter().collect();
    sorted.sort_by_key(|f| f.start);
    for f in sorted {
        if f.start < at {
            continue;
        }
        out.push_str(&text[at..f.start]);
        out.push_str("[REDACTED:");
        out.push_str(f.detector);
        out.push(']');
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Compiles every detector and loads the phone-number metadata (about 70 ms on first use, so a
/// server does it once, in the postmaster: src/embed/preload.rs).
pub fn warm() {
    scan("warm up: +1 415 555 2671, (212) 555-0187");
}

/// The names of every detector, for settings and documentation.
pub fn detector_names() -> Vec<&'static str> {
    DETECTORS.iter().map(|d| d.name).collect()
}

/// The family a detector belongs to.
pub fn family_of(detector: &str) -> Option<Family> {
    DETECTORS
        .iter()
        .find(|d| d.name == detector)
        .map(|d| d.family)
}

// ---- policy --------------------------------------------------------------------------------

/// What happens to a finding, from the mildest to the strictest: a policy that tightens another
/// (a category's, docs/api.md "Screening") keeps the stricter of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Stored as written.
    Allow,
    /// Stored as written but kept out of prompts until someone approves it: a memory becomes a
    /// pending proposal; a write that cannot wait (a message, a block, a file) is redacted.
    Flag,
    /// The span replaced by `[REDACTED:<detector>]` before anything is stored or embedded.
    Redact,
    /// The write refused (22023 naming the detector); nothing is written.
    Block,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Flag => "flag",
            Action::Redact => "redact",
            Action::Block => "block",
        }
    }

    pub fn parse(s: &str) -> Option<Action> {
        match s {
            "allow" => Some(Action::Allow),
            "flag" => Some(Action::Flag),
            "redact" => Some(Action::Redact),
            "block" => Some(Action::Block),
            _ => None,
        }
    }
}

const FAMILIES: [Family; 6] = [
    Family::Secret,
    Family::PaymentCard,
    Family::Iban,
    Family::NationalId,
    Family::Email,
    Family::Phone,
];

/// Checks one policy entry's name and action: a family or a detector, and one of the actions.
fn entry(name: &str, action: &str) -> Result<(String, Action), String> {
    let known = FAMILIES.iter().any(|f| f.name() == name) || family_of(name).is_some();
    if !known {
        return Err(format!(
            "unknown detector or family \"{name}\" (families: secret, payment_card, iban, national_id, email, phone; detectors: {})",
            detector_names().join(", ")
        ));
    }
    let action = Action::parse(action).ok_or_else(|| {
        format!("\"{action}\" for {name}: the actions are allow, flag, redact, block")
    })?;
    Ok((name.to_string(), action))
}

/// The defaults: secrets, payment cards, IBANs and national ids redacted; email addresses and
/// phone numbers allowed (people tell their assistant how to reach them).
pub const DEFAULT_POLICY: &str =
    "secret:redact, payment_card:redact, iban:redact, national_id:redact, email:allow, phone:allow";

/// A policy: an action per family, and per detector where one is named (a detector's entry wins
/// over its family's). Written `name:action, ...`; names are families or detectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    entries: Vec<(String, Action)>,
    /// Entries no finding's action may be milder than (a category's overrides).
    floor: Vec<(String, Action)>,
}

impl Policy {
    /// Parses `name:action, ...` over the defaults: what it does not name keeps its default.
    pub fn parse(spec: &str) -> Result<Policy, String> {
        let mut p = Policy::defaults();
        for part in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, action) = part
                .split_once(':')
                .ok_or_else(|| format!("\"{part}\": write name:action"))?;
            p.set(entry(name.trim(), action.trim())?);
        }
        Ok(p)
    }

    /// Entries as a JSON object `{"name": "action", ...}` (memory_configure's per-category
    /// `"screen"`, a call's `"screen"`) or the same as a `name:action, ...` string.
    pub fn entries_of(v: &serde_json::Value) -> Result<Vec<(String, Action)>, String> {
        match v {
            serde_json::Value::String(s) => {
                let mut out = vec![];
                for part in s.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let (name, action) = part
                        .split_once(':')
                        .ok_or_else(|| format!("\"{part}\": write name:action"))?;
                    out.push(entry(name.trim(), action.trim())?);
                }
                Ok(out)
            }
            serde_json::Value::Object(o) => o
                .iter()
                .map(|(k, a)| match a.as_str() {
                    Some(a) => entry(k, a),
                    None => Err(format!(
                        "{k}: the action must be a string (allow, flag, redact, block)"
                    )),
                })
                .collect(),
            _ => Err("must be a JSON object of detector or family to action".into()),
        }
    }

    /// This policy with `entries` set over it (a superuser's per-call override: it may loosen).
    pub fn with(&self, entries: &[(String, Action)]) -> Policy {
        let mut p = self.clone();
        for e in entries {
            p.set(e.clone());
        }
        p
    }

    /// The stricter of this policy and `entries` for every finding (a category's overrides:
    /// a tenant may tighten the operator's policy, never loosen it).
    pub fn tightened(&self, entries: &[(String, Action)]) -> Policy {
        Policy {
            entries: self.entries.clone(),
            floor: entries.to_vec(),
        }
    }

    /// This policy with every `flag` read as `redact`: for a write that cannot wait for an
    /// approval (a message, a block, a file), what would be held is redacted instead.
    pub fn flags_redacted(&self) -> Policy {
        let f = |e: &Vec<(String, Action)>| {
            e.iter()
                .map(|(n, a)| {
                    let a = if *a == Action::Flag {
                        Action::Redact
                    } else {
                        *a
                    };
                    (n.clone(), a)
                })
                .collect()
        };
        Policy {
            entries: f(&self.entries),
            floor: f(&self.floor),
        }
    }

    fn set(&mut self, (name, action): (String, Action)) {
        self.entries.retain(|(n, _)| *n != name);
        self.entries.push((name, action));
    }

    pub fn defaults() -> Policy {
        let mut p = Policy {
            entries: vec![],
            floor: vec![],
        };
        for part in DEFAULT_POLICY.split(", ") {
            let (n, a) = part.split_once(':').expect("default policy");
            p.entries
                .push((n.to_string(), Action::parse(a).expect("default action")));
        }
        p
    }

    /// The action for a finding: its detector's entry, else its family's, else allow; then no
    /// milder than the floor's (its detector's entry, else its family's).
    pub fn action(&self, f: &Finding) -> Action {
        let by = |entries: &[(String, Action)]| {
            let find = |name: &str| entries.iter().find(|(n, _)| n == name).map(|e| e.1);
            find(f.detector).or_else(|| find(f.family.name()))
        };
        let base = by(&self.entries).unwrap_or(Action::Allow);
        by(&self.floor).map_or(base, |floor| base.max(floor))
    }
}

/// What screening decided for one text: the text to store, the findings redacted, allowed and
/// flagged (by detector), and the first finding whose action is `block`, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub text: String,
    pub redacted: Vec<&'static str>,
    pub allowed: Vec<&'static str>,
    pub flagged: Vec<&'static str>,
    pub blocked: Option<&'static str>,
}

/// Screens `text` under `policy`.
pub fn apply(policy: &Policy, text: &str) -> Outcome {
    let found = scan(text);
    let mut to_redact = vec![];
    let mut out = Outcome {
        text: String::new(),
        redacted: vec![],
        allowed: vec![],
        flagged: vec![],
        blocked: None,
    };
    for f in &found {
        match policy.action(f) {
            Action::Block => {
                out.blocked.get_or_insert(f.detector);
            }
            Action::Redact => {
                out.redacted.push(f.detector);
                to_redact.push(f);
            }
            Action::Flag => out.flagged.push(f.detector),
            Action::Allow => out.allowed.push(f.detector),
        }
    }
    out.text = if to_redact.is_empty() {
        text.to_string()
    } else {
        redact(text, &to_redact)
    };
    out
}

// ---- checks -------------------------------------------------------------------------------

/// A token with letters and digits (a key, not a word like "sk-learn-tutorial-for-beginners").
fn mixed_token(v: &str, _: &str) -> bool {
    let digits = v.chars().filter(char::is_ascii_digit).count();
    let letters = v.chars().filter(char::is_ascii_alphabetic).count();
    digits >= 2 && letters >= 4 && !v.contains("--")
}

/// Shannon entropy of `v` in bits per character.
fn entropy(v: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in v.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let n = v.chars().count() as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// A random-looking token: high entropy, and letters with digits or mixed case.
fn high_entropy(v: &str, _: &str) -> bool {
    let upper = v.chars().any(|c| c.is_ascii_uppercase());
    let lower = v.chars().any(|c| c.is_ascii_lowercase());
    let digit = v.chars().any(|c| c.is_ascii_digit());
    entropy(v) >= 3.5 && ((upper && lower) || ((upper || lower) && digit))
}

/// A password's value: not a word that only continues the sentence ("my password is too
/// long", "the password is on the fridge").
fn password_value(v: &str, _: &str) -> bool {
    const NOT_A_PASSWORD: &[&str] = &[
        "the",
        "too",
        "not",
        "very",
        "on",
        "in",
        "at",
        "a",
        "an",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "this",
        "that",
        "same",
        "still",
        "now",
        "required",
        "incorrect",
        "wrong",
        "correct",
        "invalid",
        "expired",
        "weak",
        "strong",
        "long",
        "short",
        "safe",
        "secure",
        "set",
        "reset",
        "changed",
        "saved",
        "stored",
        "written",
        "hidden",
        "missing",
        "empty",
        "needed",
        "case",
        "something",
        "easy",
        "hard",
        "simple",
        "somewhere",
        "also",
        "just",
        "what",
        "protected",
        "different",
        "unknown",
        "forgotten",
        "lost",
        "known",
        "shared",
        "ok",
        "fine",
        "good",
        "bad",
        "better",
        "locked",
        "managed",
        "kept",
        "generated",
        "random",
        "see",
        "check",
        "ask",
        "under",
        "inside",
        "below",
        "above",
        "attached",
        "sent",
        "here",
        "there",
        "taped",
        "printed",
        "emailed",
        "texted",
        "behind",
    ];
    let word = v.trim_end_matches(['.', ',', ';', '!', '?', ')']);
    word.chars().count() >= 3 && !NOT_A_PASSWORD.contains(&word.to_ascii_lowercase().as_str())
}

fn digits_of(v: &str) -> Vec<u32> {
    v.chars().filter_map(|c| c.to_digit(10)).collect()
}

/// The Luhn check digit holds.
pub fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// A payment card: 13-19 digits in one group or in groups of 4 (Amex 4-6-5), a known issuer's
/// prefix and length, and the Luhn digit.
fn card(v: &str, _: &str) -> bool {
    let d = digits_of(v);
    let n = d.len();
    if !(13..=19).contains(&n) || !luhn(&d) {
        return false;
    }
    // Separators, when present, at a card's grouping: 4-4-4-4(-3) or 4-6-5.
    let groups: Vec<usize> = v
        .split([' ', '-'])
        .filter(|g| !g.is_empty())
        .map(str::len)
        .collect();
    if groups.len() > 1
        && !(groups.iter().take(groups.len() - 1).all(|&g| g == 4)
            || groups == [4, 6, 5]
            || groups == [4, 6, 4])
    {
        return false;
    }
    let p = |k: usize| d.iter().take(k).fold(0u32, |a, &x| a * 10 + x);
    match (p(1), p(2), p(4)) {
        (4, _, _) => [13, 16, 19].contains(&n),           // Visa
        (_, 51..=55, _) | (_, _, 2221..=2720) => n == 16, // Mastercard
        (_, 34 | 37, _) => n == 15,                       // American Express
        (_, 36 | 38 | 39, _) | (_, 30, _) => (14..=19).contains(&n), // Diners
        (_, 65, _) | (_, _, 6011) => (16..=19).contains(&n), // Discover
        (_, 35, _) => (16..=19).contains(&n),             // JCB
        (_, 62, _) => (16..=19).contains(&n),             // UnionPay
        (_, 50 | 56..=58, _) | (_, 67, _) | (_, 63, _) => (12..=19).contains(&n), // Maestro
        _ => false,
    }
}

/// An IBAN: its country's length and the ISO 7064 checksum (the `iban_validate` crate).
fn iban(v: &str, _: &str) -> bool {
    let compact: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    compact.parse::<iban::Iban>().is_ok()
}

/// A US social security number, less the numbers never issued: area 000, 666 and 900-999,
/// group 00, serial 0000. (Numbers once printed in advertising, such as 078-05-1120, are
/// still treated as SSNs: someone may be using one as theirs.)
fn us_ssn(v: &str, _: &str) -> bool {
    let p: Vec<&str> = v.split('-').collect();
    let (a, g, s) = (p[0], p[1], p[2]);
    let area: u32 = a.parse().unwrap_or(0);
    !(area == 0 || area == 666 || area >= 900 || g == "00" || s == "0000")
}

/// A UK National Insurance number: the prefixes never issued are excluded.
fn uk_nino(v: &str, _: &str) -> bool {
    let c: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    let prefix = &c[..2];
    !["BG", "GB", "NK", "KN", "TN", "NT", "ZZ"].contains(&prefix)
}

/// A Spanish DNI or NIE: the letter is the number modulo 23 in the official table.
fn es_dni(v: &str, _: &str) -> bool {
    const LETTERS: &[u8] = b"TRWAGMYFPDXBNJZSQVHLCKE";
    let c: String = v.chars().filter(|c| *c != '-').collect();
    let (body, letter) = c.split_at(c.len() - 1);
    let body = match body.chars().next() {
        Some('X') => format!("0{}", &body[1..]),
        Some('Y') => format!("1{}", &body[1..]),
        Some('Z') => format!("2{}", &body[1..]),
        _ => body.to_string(),
    };
    if body.len() != 8 {
        return false;
    }
    match body.parse::<u64>() {
        Ok(n) => LETTERS[(n % 23) as usize] == letter.as_bytes()[0],
        Err(_) => false,
    }
}

/// A Chinese resident identity number: its birth date a date, its last character the ISO
/// 7064 MOD 11-2 check of the other seventeen.
fn cn_resident_id(v: &str, _: &str) -> bool {
    const WEIGHTS: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    let b = v.as_bytes();
    let d: Vec<u32> = b[..17].iter().map(|c| u32::from(c - b'0')).collect();
    let num = |r: std::ops::Range<usize>| r.fold(0, |n, i| n * 10 + d[i]);
    let (year, month, day) = (num(6..10), num(10..12), num(12..14));
    if !(1900..=2099).contains(&year) || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return false;
    }
    let sum: u32 = d.iter().zip(WEIGHTS).map(|(x, w)| x * w).sum();
    b"10X98765432"[(sum % 11) as usize] == b[17].to_ascii_uppercase()
}

/// A French social security number (NIR): its key is 97 minus the first thirteen digits modulo
/// 97 (Corsica's 2A and 2B counted as 19 and 18).
fn fr_nir(v: &str, _: &str) -> bool {
    let c: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    if c.len() != 15 {
        return false;
    }
    let (body, key) = c.split_at(13);
    let body = body.replace("2A", "19").replace("2B", "18");
    let (Ok(n), Ok(k)) = (body.parse::<u64>(), key.parse::<u64>()) else {
        return false;
    };
    k == 97 - n % 97
}

/// A Brazilian CPF: two mod-11 check digits, and not one digit eleven times.
fn br_cpf(v: &str, _: &str) -> bool {
    let d = digits_of(v);
    if d.len() != 11 || d.iter().all(|x| *x == d[0]) {
        return false;
    }
    let check = |n: usize| {
        let sum: u32 = (0..n).map(|i| d[i] * (n as u32 + 1 - i as u32)).sum();
        (sum * 10) % 11 % 10
    };
    check(9) == d[9] && check(10) == d[10]
}

/// An Italian codice fiscale: its last letter the check of the other fifteen characters.
fn it_codice_fiscale(v: &str, _: &str) -> bool {
    // The values of characters in odd places (1st, 3rd, ...), digits and letters alike.
    const ODD: [u32; 26] = [
        1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24,
        23,
    ];
    let b = v.as_bytes();
    let value = |c: u8, odd: bool| {
        let i = if c.is_ascii_digit() {
            c - b'0'
        } else {
            c - b'A'
        } as usize;
        if odd {
            ODD[i]
        } else {
            i as u32
        }
    };
    let sum: u32 = b[..15]
        .iter()
        .enumerate()
        .map(|(i, c)| value(*c, i % 2 == 0))
        .sum();
    b[15] == b'A' + (sum % 26) as u8
}

/// A German tax identification number: no leading 0, and its last digit the ISO 7064 MOD 11,10
/// check of the other ten.
fn de_tax_id(v: &str, _: &str) -> bool {
    let d = digits_of(v);
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let mut product = 10;
    for x in &d[..10] {
        let mut sum = (x + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    let check = (11 - product) % 10;
    check == d[10]
}

/// Japan's individual number (My Number): its twelfth digit the check of the other eleven.
fn jp_my_number(v: &str, _: &str) -> bool {
    let d = digits_of(v);
    if d.len() != 12 {
        return false;
    }
    let sum: u32 = (1..=11)
        .map(|n| d[11 - n] * if n <= 6 { n as u32 + 1 } else { n as u32 - 5 })
        .sum();
    let r = sum % 11;
    d[11] == if r <= 1 { 0 } else { 11 - r }
}

/// A Canadian social insurance number, grouped 3-3-3: Luhn, and not starting with 0 or 8.
fn ca_sin(v: &str, _: &str) -> bool {
    let d = digits_of(v);
    d.len() == 9 && d[0] != 0 && d[0] != 8 && luhn(&d)
}

/// A phone number valid for its country (international form) or for the US/Canada, which the
/// libphonenumber data knows; dates and plain counts are not.
fn phone(v: &str, _: &str) -> bool {
    let d = digits_of(v);
    if d.len() < 8 || d.len() > 15 {
        return false;
    }
    let parsed = if v.starts_with('+') {
        phonenumber::parse(None, v)
    } else {
        // Without a country code, only the North American shape counts ((212) 555-0187,
        // 415-555-2671, 415.555.2671): a run of digits without one is a date, a count or an
        // order number as often as a phone.
        static NANP: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"^(?:\(\d{3}\) ?|\d{3}[ .\-])\d{3}[ .\-]\d{4}$").expect("NANP pattern")
        });
        if !NANP.is_match(v) {
            return false;
        }
        phonenumber::parse(Some(phonenumber::country::Id::US), v)
    };
    parsed.is_ok_and(|p| phonenumber::is_valid(&p))
}

/// The country of a language's national phone numbers (the one with the most speakers where
/// several write it).
fn region_of(language: &str) -> Option<phonenumber::country::Id> {
    use phonenumber::country::Id;
    Some(match language {
        "de" => Id::DE,
        "fr" => Id::FR,
        "es" => Id::ES,
        "pt" => Id::PT,
        "it" => Id::IT,
        "nl" => Id::NL,
        "pl" => Id::PL,
        "sv" => Id::SE,
        "tr" => Id::TR,
        "ru" => Id::RU,
        "ja" => Id::JP,
        "zh" => Id::CN,
        "ko" => Id::KR,
        _ => return None,
    })
}

/// A phone number in its country's national form ("030 12345678", "06 12 34 56 78",
/// "090-1234-5678"), valid for the country of the text's language. Written in groups: a plain
/// run of digits is an order number or a count as often as a phone.
fn national_phone(v: &str, region: Option<phonenumber::country::Id>) -> bool {
    let Some(r) = region else {
        return false;
    };
    let d = digits_of(v);
    if v.starts_with('+') || d.len() < 8 || d.len() > 13 || !v.contains([' ', '-', '.', '(', '/']) {
        return false;
    }
    phonenumber::parse(Some(r), v).is_ok_and(|p| phonenumber::is_valid(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn national_phone_numbers_in_the_texts_language() {
        for (text, number) in [
            (
                "Du erreichst mich unter 030 12345678, am besten abends nach der Arbeit.",
                "030 12345678",
            ),
            (
                "Tu peux m'appeler au 06 12 34 56 78 quand tu veux, je suis à la maison.",
                "06 12 34 56 78",
            ),
            (
                "Puedes llamarme al 612 34 56 78 cuando quieras, estoy en casa todo el día.",
                "612 34 56 78",
            ),
            (
                "Podes ligar-me para o 912 345 678 quando quiseres, estou em casa o dia todo.",
                "912 345 678",
            ),
            (
                "Puoi chiamarmi al 333 123 4567 quando vuoi, sono a casa tutto il giorno.",
                "333 123 4567",
            ),
            (
                "私の電話番号は090-1234-5678です。いつでも電話してください。",
                "090-1234-5678",
            ),
        ] {
            let found = scan(text);
            assert!(
                found
                    .iter()
                    .any(|f| f.detector == "phone" && &text[f.start..f.end] == number),
                "{text}: {found:?}"
            );
        }
        let jp = "連絡先はtaro.yamada@example.jpです。";
        assert_eq!(
            scan(jp)
                .iter()
                .map(|f| &jp[f.start..f.end])
                .collect::<Vec<_>>(),
            ["taro.yamada@example.jp"]
        );
        // Not in an English text, nor a run of digits without groups.
        assert!(scan("My order number is 030 12345678 and it has not arrived.").is_empty());
        assert!(
            scan("Die Bestellnummer ist 03012345678 und sie ist noch nicht angekommen.").is_empty()
        );
    }

    fn detectors(text: &str) -> Vec<&'static str> {
        scan(text).into_iter().map(|f| f.detector).collect()
    }

    #[test]
    fn the_issue_s_sentence_is_redacted() {
        let t = "My social security number is 123-45-6789 and my password is hunter2.";
        let f = scan(t);
        assert_eq!(detectors(t), vec!["us_ssn", "password"]);
        let refs: Vec<&Finding> = f.iter().collect();
        assert_eq!(
            redact(t, &refs),
            "My social security number is [REDACTED:us_ssn] and my password is [REDACTED:password]."
        );
    }

    #[test]
    fn luhn_and_card_shapes() {
        assert!(card("4111 1111 1111 1111", ""));
        assert!(card("4111111111111111", ""));
        assert!(!card("4111 1111 1111 1112", ""));
        assert!(card("3782 822463 10005", ""));
        assert!(!card("1234 5678 9012 3456", ""));
        assert!(!card("41 11 11 11 11 11 11 11", ""));
        // The fraction of a decimal number is not a card (a LangGraph channel version is
        // `<counter>.<random float>`), even when its digits pass Luhn.
        assert!(luhn(&digits_of("38495983759484487")));
        assert!(scan("00000000000000000000000000000001.0.38495983759484487").is_empty());
        assert!(scan("0.4111111111111111").is_empty());
        assert_eq!(scan("card.4111111111111111").len(), 1);
        assert_eq!(scan("Card: 4111111111111111.").len(), 1);
    }

    #[test]
    fn ssn_ranges_never_issued_are_not_ssns() {
        assert!(us_ssn("123-45-6789", ""));
        assert!(!us_ssn("000-12-3456", ""));
        assert!(!us_ssn("666-12-3456", ""));
        assert!(!us_ssn("912-12-3456", ""));
        assert!(!us_ssn("123-00-3456", ""));
        assert!(!us_ssn("123-45-0000", ""));
    }

    #[test]
    fn dni_letter_and_sin_checksum() {
        assert!(es_dni("12345678Z", ""));
        assert!(!es_dni("12345678A", ""));
        assert!(es_dni("X1234567L", ""));
        assert!(ca_sin("130 692 544", ""));
        assert!(!ca_sin("130 692 545", ""));
        assert!(!ca_sin("046 454 286", "")); // Luhn-valid, but no SIN starts with 0
    }

    #[test]
    fn national_ids_by_their_checks() {
        // Published examples: a Chinese id (GB 11643), a French NIR, a CPF, a codice fiscale,
        // a German tax id, a My Number.
        assert!(cn_resident_id("11010519491231002X", ""));
        assert!(!cn_resident_id("110105194912310021", ""));
        assert!(!cn_resident_id("110105194913310026", "")); // month 13
        assert!(fr_nir("1 85 05 78 006 084 91", ""));
        assert!(fr_nir("2 55 08 2A 004 001 94", ""));
        assert!(!fr_nir("1 85 05 78 006 084 36", ""));
        assert!(br_cpf("529.982.247-25", ""));
        assert!(!br_cpf("529.982.247-26", ""));
        assert!(!br_cpf("111.111.111-11", ""));
        assert!(it_codice_fiscale("RSSMRA85T10A562S", ""));
        assert!(!it_codice_fiscale("RSSMRA85T10A562T", ""));
        assert!(de_tax_id("86095742719", ""));
        assert!(!de_tax_id("86095742718", ""));
        assert!(jp_my_number("123456789018", ""));
        assert!(!jp_my_number("123456789012", ""));
        // In text, next to the scripts that write them, and the plain digits only after a name.
        assert_eq!(
            detectors("身份证号11010519491231002X。"),
            vec!["cn_resident_id"]
        );
        assert_eq!(
            detectors("Meine Steuer-ID ist 86 095 742 719."),
            vec!["de_tax_id"]
        );
        assert_eq!(
            detectors("マイナンバーは1234 5678 9018です"),
            vec!["jp_my_number"]
        );
        assert_eq!(detectors("Meu CPF é 529.982.247-25."), vec!["br_cpf"]);
        assert_eq!(detectors("cpf 52998224725"), vec!["br_cpf"]);
        assert_eq!(
            detectors("Il mio codice fiscale è RSSMRA85T10A562S."),
            vec!["it_codice_fiscale"]
        );
        assert_eq!(
            detectors("Numéro de sécu : 1 85 05 78 006 084 91"),
            vec!["fr_nir"]
        );
        assert!(detectors("Bestellnummer 86095742719").is_empty());
    }

    #[test]
    fn iban_checksum() {
        assert_eq!(
            detectors("Pay to DE89 3704 0044 0532 0130 00 please."),
            vec!["iban"]
        );
        assert!(detectors("Pay to DE89 3704 0044 0532 0130 01 please.").is_empty());
    }

    #[test]
    fn policy_defaults_and_overrides() {
        let t = "mail ana@example.org, card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE";
        let o = apply(&Policy::defaults(), t);
        assert_eq!(o.redacted, vec!["payment_card", "aws_access_key"]);
        assert_eq!(o.allowed, vec!["email"]);
        assert_eq!(
            o.text,
            "mail ana@example.org, card [REDACTED:payment_card], key [REDACTED:aws_access_key]"
        );
        let p = Policy::parse("email:redact, aws_access_key:block").unwrap();
        let o = apply(&p, t);
        assert_eq!(o.blocked, Some("aws_access_key"));
        assert_eq!(o.redacted, vec!["email", "payment_card"]);
        assert!(Policy::parse("secret:maybe").is_err());
        let p = Policy::parse("email:flag").unwrap();
        assert_eq!(apply(&p, t).flagged, vec!["email"]);
        assert_eq!(
            apply(&p.flags_redacted(), t).redacted,
            vec!["email", "payment_card", "aws_access_key"]
        );
        assert!(Policy::parse("passport:redact").is_err());
        assert!(Policy::parse("secret").is_err());
        assert_eq!(Policy::parse("").unwrap(), Policy::defaults());
    }

    #[test]
    fn overlaps_go_to_the_earlier_detector() {
        let t = "key: sk-proj-abcDEF1234567890ghijKLMN and AKIAIOSFODNN7EXAMPLE";
        assert_eq!(detectors(t), vec!["openai_key", "aws_access_key"]);
    }

    #[test]
    fn a_category_tightens_and_a_superuser_overrides() {
        let t = "mail ana@example.org, card 4111 1111 1111 1111";
        let cat =
            Policy::entries_of(&serde_json::json!({"email": "flag", "payment_card": "allow"}))
                .unwrap();
        let o = apply(&Policy::defaults().tightened(&cat), t);
        // email tightened to flag; the card cannot be loosened below the operator's redact.
        assert_eq!(o.flagged, vec!["email"]);
        assert_eq!(o.redacted, vec!["payment_card"]);
        let o = apply(&Policy::defaults().with(&cat), t);
        assert_eq!(o.flagged, vec!["email"]);
        assert_eq!(o.allowed, vec!["payment_card"]);
        assert_eq!(
            Policy::entries_of(&serde_json::json!("secret:block, email:allow")).unwrap(),
            vec![
                ("secret".to_string(), Action::Block),
                ("email".to_string(), Action::Allow)
            ]
        );
        assert!(Policy::entries_of(&serde_json::json!({"passport": "redact"})).is_err());
        assert!(Policy::entries_of(&serde_json::json!({"email": true})).is_err());
        assert!(Policy::entries_of(&serde_json::json!([1])).is_err());
    }
}
