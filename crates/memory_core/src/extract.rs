//! Extraction (docs/design.md "Extraction"): turning a thread's new messages into memories in
//! the background. This module is the part without Postgres: the LLM's prompt
//! (prompts/extract.txt), its input and the checks on its answer, the deterministic rules used
//! without an LLM, the caps, and the conservative no-LLM supersede rule.
//!
//! # Why it is shaped this way
//! - One structured call per batch of turns: the turns are numbered, the answer names the turn
//!   each fact comes from, so the per-turn cap (≤ 3 writes per turn, docs/design.md "Procedures
//!   and extraction") can be enforced on what the model returns, not trusted to it.
//! - Nothing the model says is written unchecked: a fact must come from a turn of the batch,
//!   fit the writing rules (one or two sentences, ≤ 280 characters) and supersede only a memory
//!   it was shown. A partial answer keeps its valid entries; a garbled one is an error, retried
//!   by the caller.
//! - Without an LLM the rules extract only what a user says outright about themselves or asks
//!   to be remembered, rewritten in the third person; anything else is left alone rather than
//!   guessed at.

use crate::text;
use serde_json::{json, Map, Value};

/// The system prompt of the extraction call.
pub const PROMPT: &str = include_str!("../prompts/extract.txt");

/// The theory-of-mind pass's instructions (crates/memory_core/prompts/tom.txt).
pub const TOM_PROMPT: &str = include_str!("../prompts/tom.txt");
/// The pass's inputs: the latest activity items (N ≤ 5), the new semantic items (K ≤ 3) and
/// a recent conversation snippet (≤ 1k characters).
pub const TOM_ACTIVITY: usize = 5;
pub const TOM_NEW: usize = 3;
pub const TOM_SNIPPET_CHARS: usize = 1000;
/// The pass's budget: at most 220 tokens of answer.
pub const TOM_MAX_TOKENS: u32 = 220;

/// docs/design.md "Procedures and extraction": at most 3 final writes per turn.
pub const MAX_PER_TURN: usize = 3;
/// docs/design.md "Insights": 1-3 insights per call.
pub const MAX_INSIGHTS: usize = 3;
pub const MAX_STEPS: usize = 20;
const MAX_TITLE_CHARS: usize = 120;
const MAX_ABOUT_CHARS: usize = 100;
const MAX_CATEGORY_CHARS: usize = 40;
/// docs/design.md "Insights": insights are stored in this category with importance 2.
pub const INSIGHT_CATEGORY: &str = "relationship_dynamic";

/// One message of the thread, as extraction sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub seq: i64,
    /// `user` or `assistant` (other roles are not given to extraction).
    pub role: String,
    /// The speaker's name when the message has one.
    pub name: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Fact,
    Insight,
    Procedure,
}

impl Kind {
    /// The memory kind it is written as.
    pub fn memory_kind(self) -> &'static str {
        match self {
            Kind::Fact => "semantic",
            Kind::Insight => "insight",
            Kind::Procedure => "procedural",
        }
    }
}

/// A memory to write, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub kind: Kind,
    /// The turn it comes from (insights: the batch's last turn).
    pub seq: i64,
    pub text: String,
    pub about: Option<String>,
    pub category: Option<String>,
    pub importance: i16,
    pub tags: Vec<String>,
    /// Index (0-based) into the known memories shown to the model.
    pub supersedes: Option<usize>,
    /// How sure the extraction is, 0-1: the model's own figure when it gave one, else the
    /// rule's ([`RULE_CONFIDENCE`], [`ASKED_CONFIDENCE`]). Written as the memory's `confidence`
    /// (the consent gate reads it) and `metadata.confidence`.
    pub confidence: Option<f64>,
}

/// A fact the rules take from a plain first-person statement ("I live in Porto").
pub const RULE_CONFIDENCE: f64 = 0.8;
/// A fact the user asked to be remembered ("remember that ...").
pub const ASKED_CONFIDENCE: f64 = 0.9;

/// A model's confidence, when it gave a number from 0 to 1.
fn confidence(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
        .filter(|c| (0.0..=1.0).contains(c))
}

/// The user message of the extraction call: the batch's turns, a few earlier ones for context,
/// the known memories (numbered from 1) and whether insights are wanted.
pub fn llm_input(
    context: &[Turn],
    turns: &[Turn],
    known: &[(String, Option<String>)],
    insights: bool,
    max_turn_chars: usize,
) -> String {
    let turn = |t: &Turn| {
        json!({"turn": t.seq, "role": t.role, "speaker": t.name,
               "text": t.text.chars().take(max_turn_chars).collect::<String>()})
    };
    json!({
        "context": context.iter().map(turn).collect::<Vec<_>>(),
        "turns": turns.iter().map(turn).collect::<Vec<_>>(),
        "known": known.iter().enumerate()
            .map(|(i, (t, a))| json!({"n": i + 1, "text": t, "about": a}))
            .collect::<Vec<_>>(),
        "insights": insights,
    })
    .to_string()
}

/// What a checked answer holds: the candidates in the order given, and the entries dropped
/// (malformed, over a cap, from a turn outside the batch, made up), each with why.
#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    pub candidates: Vec<Candidate>,
    /// Every dropped entry: why, and its text as the model gave it (the entry's JSON when it
    /// had no text). For reading what the checks cost (`make eval-extract`'s review,
    /// crates/memory_core/examples/extract_check.rs); memory_extract counts them only.
    pub dropped: Vec<Dropped>,
}

/// An entry of the answer left out, and why: `cut` (the answer ended inside it), `malformed`
/// (a field missing or of the wrong type; a fact without a turn of the batch that says it),
/// `ungrounded` (most of its words are not the batch's), `unnamed` (it names what the batch
/// does not), `first_person` (a fact all in the speaker's own words), `unattributed` (a fact
/// that names nobody), `wrong_speaker` (a fact about a speaker no turn of theirs, nor one
/// naming them, says), `example` (a prompt's own example), `repeated` (the same text twice),
/// `insights_not_asked`, `insights_cap`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    pub reason: &'static str,
    pub text: String,
}

impl Parsed {
    /// How many entries were dropped (memory_extract's `rejected`).
    pub fn rejected(&self) -> usize {
        self.dropped.len()
    }

    fn drop(&mut self, reason: &'static str, text: impl Into<String>) {
        self.dropped.push(Dropped {
            reason,
            text: text.into(),
        });
    }
}

/// The model's answer, checked against the batch (`turns`, the `known` memories shown, whether
/// insights were allowed). `Err` when the answer is not the JSON object asked
/// for (prose, a refusal, truncated JSON): the caller retries the batch later.
pub fn parse_answer(
    answer: &str,
    turns: &[Turn],
    known: &[&str],
    insights: bool,
) -> Result<Parsed, String> {
    let (v, cut) = crate::answer::parse(answer)?;
    let obj = v
        .as_object()
        .ok_or("the answer is not a JSON object".to_string())?;
    if !["facts", "insights", "procedures"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return Err("the answer has none of facts, insights, procedures".into());
    }
    let mut out = Parsed::default();
    // An answer cut at max_tokens lost the entry it was writing: counted as rejected.
    if cut {
        out.drop("cut", "");
    }
    // What the batch says, its speakers' names and the known memories shown with it included
    // (a fact may name whom "my sister" is from one of them): a fact or procedure most of whose
    // words it does not say (crate::summaries::GROUNDED_MIN), or naming what it does not name
    // (`names_said`), was made up. A 1.5B model wrote "Starting the dance studio: 1. Choose a
    // location. 2. Get a license." from "contemporary is my top pick" (docs/retrieval.md
    // "Extraction with a real model").
    let said: std::collections::HashSet<String> = turns
        .iter()
        .flat_map(|t| {
            crate::summary::stems(&format!("{} {}", t.name.as_deref().unwrap_or(""), t.text))
        })
        .chain(known.iter().flat_map(|k| crate::summary::stems(k)))
        .collect();
    // Why a candidate was made up, if it was.
    let made_up = |c: &Option<Candidate>| {
        c.as_ref().and_then(|c| {
            if crate::summary::grounded_share(&c.text, &said) < crate::summaries::GROUNDED_MIN {
                Some("ungrounded")
            } else if !names_said(&c.text, &said) {
                Some("unnamed")
            } else {
                None
            }
        })
    };
    let last = turns.last().map(|t| t.seq).unwrap_or(0);
    let in_batch = |v: &Value| v.as_i64().filter(|s| turns.iter().any(|t| t.seq == *s));
    for f in list(obj, "facts") {
        let c = (|| {
            let f = f.as_object()?;
            // What the fact says in the third person (the semantic writing rule), before its
            // length is checked: a small model pastes the speaker's own words after their name
            // ("Gina used to compete in dance shows - my fav memory was when my team won");
            // those clauses are not the fact's. `Err` when nothing else is left.
            let raw = f.get("text")?.as_str().filter(|t| !t.trim().is_empty())?;
            let text = match without_first_person(raw) {
                Some(t) => short_text(&Value::String(t))?,
                None => return Some(Err(raw.to_string())),
            };
            // The known memory this fact replaces: only one the batch was shown. Any other
            // value (a number no memory shown has, 0, a string) supersedes nothing, and the
            // fact stands as a new one: Qwen2.5-Coder-1.5B put a number in every fact it wrote
            // on LoCoMo, shown no memory at all, and each of its 12 facts was dropped for it
            // (docs/retrieval.md "Extraction with a real model").
            let supersedes = f
                .get("supersedes")
                .and_then(Value::as_u64)
                .map(|n| n as usize)
                // `then`, not `then_some`: `n - 1` of a model's 0 must not be computed.
                .and_then(|n| (1..=known.len()).contains(&n).then(|| n - 1));
            Some(Ok(Candidate {
                kind: Kind::Fact,
                // Found below (`attach`): the turn the model gave, or the one that says it.
                seq: turn_number(f.get("turn")).unwrap_or(i64::MIN),
                text,
                about: opt_str(f.get("about"), MAX_ABOUT_CHARS),
                category: category(f.get("category")),
                importance: importance(f.get("importance")),
                tags: tags(f.get("tags")),
                supersedes,
                confidence: confidence(f.get("confidence")),
            }))
        })();
        let mut c = match c {
            Some(Ok(c)) => c,
            Some(Err(text)) => {
                out.drop("first_person", text);
                continue;
            }
            None => {
                out.drop("malformed", f.to_string());
                continue;
            }
        };
        if let Some(why) = made_up(&Some(c.clone())) {
            out.drop(why, c.text);
            continue;
        }
        if !attributed(&c, turns) {
            out.drop("unattributed", c.text);
            continue;
        }
        match attach(&c.text, c.seq, turns) {
            Ok(seq) => {
                c.seq = seq;
                // Whom it is about (the memory's actor), when the model did not say: the
                // speaker whose name starts it.
                if c.about.is_none() {
                    c.about = subject(&c.text, turns).map(str::to_string);
                }
            }
            Err(why) => {
                out.drop(why, c.text);
                continue;
            }
        }
        push(&mut out, Some(c), f);
    }
    for i in list(obj, "insights") {
        if !insights {
            out.drop("insights_not_asked", i.to_string());
            continue;
        }
        let c = (|| {
            let i = i.as_object()?;
            let text = short_text(i.get("summary").or_else(|| i.get("text"))?)?;
            Some(Candidate {
                kind: Kind::Insight,
                seq: last,
                text,
                about: None,
                category: Some(INSIGHT_CATEGORY.into()),
                importance: importance(i.get("importance")),
                tags: tags(i.get("tags")),
                supersedes: None,
                confidence: confidence(i.get("confidence")),
            })
        })();
        if c.is_some()
            && out
                .candidates
                .iter()
                .filter(|c| c.kind == Kind::Insight)
                .count()
                >= MAX_INSIGHTS
        {
            out.drop("insights_cap", c.map(|c| c.text).unwrap_or_default());
            continue;
        }
        push(&mut out, c, i);
    }
    for p in list(obj, "procedures") {
        let c = (|| {
            let p = p.as_object()?;
            let seq = in_batch(p.get("turn")?)?;
            let title = opt_str(p.get("title"), MAX_TITLE_CHARS)?;
            let steps: Vec<String> = p
                .get("steps")?
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(text::normalize).filter(|s| !s.is_empty()))
                .collect::<Option<_>>()?;
            if steps.is_empty()
                || steps.len() > MAX_STEPS
                || steps
                    .iter()
                    .any(|s| s.chars().count() > text::MAX_SHORT_CHARS)
            {
                return None;
            }
            Some(Candidate {
                kind: Kind::Procedure,
                seq,
                text: procedure_text(&title, &steps),
                about: None,
                category: Some("procedural".into()),
                importance: importance(p.get("importance")),
                tags: tags(p.get("tags")),
                supersedes: None,
                confidence: confidence(p.get("confidence")),
            })
        })();
        if let Some(why) = made_up(&c) {
            out.drop(why, c.map(|c| c.text).unwrap_or_default());
            continue;
        }
        // A procedure is what someone described: the turn it names, or the one before it (a
        // question and its answer), says most of it. Its words are often the batch's
        // elsewhere: Qwen2.5-Coder-1.5B wrote "Launching the clothing store: 1. Choose a location
        // that has good natural light. 2. Set up a website." for Gina's "I just launched an ad
        // campaign for my clothing store", from Jon's search for a studio with natural light.
        if let Some(c) = c.as_ref().filter(|c| !described(&c.text, c.seq, turns)) {
            out.drop("ungrounded", c.text.clone());
            continue;
        }
        push(&mut out, c, p);
    }
    Ok(out)
}

/// Whether the turn `seq` of the batch and the one before it say at least `GROUNDED_MIN` of
/// `text`'s content words.
fn described(text: &str, seq: i64, turns: &[Turn]) -> bool {
    let Some(at) = turns.iter().position(|t| t.seq == seq) else {
        return false;
    };
    let said: std::collections::HashSet<String> = turns[at.saturating_sub(1)..=at]
        .iter()
        .flat_map(|t| {
            crate::summary::stems(&format!("{} {}", t.name.as_deref().unwrap_or(""), t.text))
        })
        .collect();
    crate::summary::grounded_share(text, &said) >= crate::summaries::GROUNDED_MIN
}

/// A turn number as a model writes it: a number, or a number in a string ("7").
fn turn_number(v: Option<&Value>) -> Option<i64> {
    let v = v?;
    v.as_i64().or_else(|| v.as_str()?.trim().parse().ok())
}

/// English first-person words: a sentence with one speaks as the speaker, not of them.
const FIRST_PERSON: [&str; 18] = [
    "I",
    "I'm",
    "I've",
    "I'd",
    "I'll",
    "me",
    "my",
    "mine",
    "myself",
    "we",
    "we're",
    "we've",
    "we'd",
    "we'll",
    "our",
    "ours",
    "ourselves",
    "us",
];

/// `text` without its sentences in the first person (`FIRST_PERSON`, English only); None when
/// every sentence is. A fact is written in the third person about whom it concerns; a sentence
/// in the first person is the turn pasted in, whose "my" no longer says whose.
fn without_first_person(text: &str) -> Option<String> {
    let first = |s: &str| {
        s.split(|c: char| {
            c.is_whitespace() || matches!(c, ',' | '.' | '!' | '?' | ';' | ':' | '"' | '(' | ')')
        })
        .map(|w| w.replace('\u{2019}', "'"))
        .any(|w| {
            FIRST_PERSON.contains(&w.as_str())
                || (w.len() > 1
                    && FIRST_PERSON.contains(&capitalised_lower(&w).as_str())
                    && w != "US")
        })
    };
    // By sentence, and within one by the clauses a dash or a semicolon sets apart: the
    // clauses before the first one in the first person stay, as a sentence of their own.
    let mut kept: Vec<String> = vec![];
    for s in crate::summary::sentences(text) {
        let clauses: Vec<&str> = s
            .split([';', '\u{2014}', '\u{2013}'])
            .flat_map(|c| c.split(" - "))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let lead: Vec<&str> = clauses.iter().take_while(|c| !first(c)).copied().collect();
        if lead.len() == clauses.len() {
            kept.push(s);
        } else if !lead.is_empty() {
            kept.push(sentence(&lead.join("; ")));
        }
    }
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// "My" → "my", "We've" → "we've": a sentence may start with one (but "I" stays "I").
fn capitalised_lower(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The batch speaker a fact is about: the one whose name starts it ("Jon is ...", "Jon's ...").
fn subject<'a>(text: &str, turns: &'a [Turn]) -> Option<&'a str> {
    turns.iter().filter_map(|t| t.name.as_deref()).find(|n| {
        !n.is_empty()
            && text.strip_prefix(n).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with([' ', '\'', '\u{2019}', ',', '.'])
            })
    })
}

/// Whether `text` names `name` as a word of its own, in any case ("Wow Jon, same here" names
/// Jon; "Mary Ann" needs both words).
fn names(text: &str, name: &str) -> bool {
    let text = text.to_lowercase();
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
    let name = name.to_lowercase();
    let mut parts = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .peekable();
    parts.peek().is_some() && parts.all(|p| words.contains(&p))
}

/// Whether a fact says whom or what it is about: a name (a capitalised word inside a
/// sentence), a speaker of the batch, a name the batch says, or "user" (a conversation whose
/// speakers have no names) in its text, or an `about` that is a speaker or a name of the
/// batch (the memory's actor then says whom, though its text does not). "Yeah, awesome! Glad
/// to be part of it." (a turn copied as a fact, with no `about`) says nothing of anyone.
fn attributed(c: &Candidate, turns: &[Turn]) -> bool {
    // Speakers without names: the fact says "The user" or whom it likes.
    if turns.iter().all(|t| t.name.is_none()) {
        return true;
    }
    let is_name = |t: &String| t.chars().all(char::is_alphabetic);
    if crate::dedupe::distinguishing_tokens(&c.text)
        .iter()
        .any(is_name)
    {
        return true;
    }
    // The batch's names: its speakers', and those its turns say.
    let batch: Vec<String> = turns
        .iter()
        .flat_map(|t| {
            t.name.iter().map(|n| n.to_lowercase()).chain(
                crate::dedupe::distinguishing_tokens(&t.text)
                    .into_iter()
                    .filter(is_name),
            )
        })
        .collect();
    names(&c.text, "user")
        || batch.iter().any(|n| names(&c.text, n))
        || c.about
            .as_deref()
            .is_some_and(|a| names(&c.text, a) || batch.contains(&a.to_lowercase()))
}

/// The turn a fact comes from. The model's turn stands when it can carry the fact: it is the
/// fact's subject's (`subject`), or names them, or the fact names no speaker first. Otherwise
/// (no turn, one outside the batch, or another speaker's that does not name the subject) the
/// turn that says most of the fact among those that can carry it, when it says at least
/// `GROUNDED_MIN` of its words. A turn is where the memory's speaker and time come from:
/// Qwen2.5-Coder-1.5B attached "Caroline chose the adoption agency because ..." to Melanie's
/// question "What made you pick it?" and gave turns outside the batch (docs/retrieval.md
/// "Extraction with a real model"). Err: `malformed` when nothing carries a fact that names
/// no speaker first, `wrong_speaker` when nothing carries it for the speaker it names.
fn attach(text: &str, given: i64, turns: &[Turn]) -> Result<i64, &'static str> {
    let subject = subject(text, turns);
    let own = |t: &Turn| subject.is_none_or(|s| t.name.as_deref() == Some(s));
    let carries = |t: &Turn| own(t) || subject.is_some_and(|s| names(&t.text, s));
    let share = |t: &Turn| {
        let said =
            crate::summary::stems(&format!("{} {}", t.name.as_deref().unwrap_or(""), t.text));
        crate::summary::grounded_share(text, &said)
    };
    let given_turn = turns.iter().find(|t| t.seq == given);
    if let Some(t) = given_turn.filter(|t| own(t)) {
        return Ok(t.seq);
    }
    // The subject's own turns first, then those naming them.
    let best = |pick: &dyn Fn(&Turn) -> bool| {
        turns
            .iter()
            .filter(|t| pick(t))
            .map(|t| (share(t), t.seq))
            .filter(|(s, _)| *s >= crate::summaries::GROUNDED_MIN)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(_, seq)| seq)
    };
    if let Some(seq) = best(&own) {
        return Ok(seq);
    }
    if let Some(t) = given_turn.filter(|t| carries(t)) {
        return Ok(t.seq);
    }
    best(&carries).ok_or(if subject.is_some() && given_turn.is_some() {
        "wrong_speaker"
    } else {
        "malformed"
    })
}

/// Whether every name `text` gives (a capitalised word inside a sentence: a person, a place,
/// a company) is one the batch says, by the first four letters as `said` holds them. Most of
/// such a fact's words can be the batch's and its point not: SmolLM2 wrote "Eva lives in
/// Lisbon" from "my sister Eva lives in Porto" (docs/design.md "Extraction"). Numbers are left
/// to the share rule (a model may write a date the batch implies), and so are scripts without
/// letter case, whose every word is a name to `distinguishing_tokens`.
fn names_said(text: &str, said: &std::collections::HashSet<String>) -> bool {
    // "Eva's" names Eva.
    let text = text.replace("'s", "").replace("\u{2019}s", "");
    crate::dedupe::distinguishing_tokens(&text)
        .iter()
        // Words of cased letters only: not numbers, not uncased scripts.
        .filter(|t| t.chars().all(char::is_lowercase))
        // Through the same stems as `said`: a capitalised function word ("The Hague") is none.
        .all(|t| crate::summary::stems(t).iter().all(|s| said.contains(s)))
}

/// The user message of the theory-of-mind call: the latest activity items, the
/// new facts, and the end of the conversation, each within its cap.
pub fn tom_input(activity: &[String], new: &[String], turns: &[Turn]) -> String {
    let said: Vec<String> = turns
        .iter()
        .map(|t| {
            let who = t.name.clone().unwrap_or_else(|| t.role.clone());
            format!("{who}: {}", t.text)
        })
        .collect();
    let all = said.join("\n");
    let n = all.chars().count();
    let snippet: String = all
        .chars()
        .skip(n.saturating_sub(TOM_SNIPPET_CHARS))
        .collect();
    json!({
        "activity": activity.iter().take(TOM_ACTIVITY).collect::<Vec<_>>(),
        "new": new.iter().take(TOM_NEW).collect::<Vec<_>>(),
        "snippet": snippet,
    })
    .to_string()
}

/// An insight of the theory-of-mind pass: the memory to write, and the benign field it speaks
/// to with the model's confidence, when it said (an inference with high confidence is written at once).
#[derive(Debug, Clone, PartialEq)]
pub struct Insight {
    pub memory: Candidate,
    pub field: Option<String>,
    pub confidence: Option<f64>,
}

/// The theory-of-mind answer, checked: at most [`MAX_INSIGHTS`], each a short third-person
/// sentence (the semantic writing rule), category `relationship_dynamic`, importance 2 unless
/// given. `Err` when the answer is not the JSON asked for; an empty list is a valid answer.
pub fn parse_tom(answer: &str, seq: i64) -> Result<Vec<Insight>, String> {
    let (v, _) = crate::answer::parse(answer)?;
    let obj = v
        .as_object()
        .ok_or("the answer is not a JSON object".to_string())?;
    let mut out: Vec<Insight> = vec![];
    for i in list(obj, "insights") {
        if out.len() >= MAX_INSIGHTS {
            break;
        }
        let Some(i) = i.as_object() else { continue };
        let Some(text) = i
            .get("summary")
            .or_else(|| i.get("text"))
            .and_then(short_text)
        else {
            continue;
        };
        if copies_example(&text)
            || out
                .iter()
                .any(|o| o.memory.text.eq_ignore_ascii_case(&text))
        {
            continue;
        }
        out.push(Insight {
            memory: Candidate {
                kind: Kind::Insight,
                seq,
                text,
                about: None,
                category: Some(INSIGHT_CATEGORY.into()),
                importance: importance(i.get("importance")),
                tags: tags(i.get("tags")),
                supersedes: None,
                confidence: None,
            },
            field: category(i.get("field")),
            confidence: confidence(i.get("confidence")),
        });
    }
    Ok(out)
}

/// A procedure's memory text: its title, then its numbered steps (docs/design.md "Procedures
/// and extraction").
pub fn procedure_text(title: &str, steps: &[String]) -> String {
    let numbered: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {}", i + 1, s))
        .collect();
    format!("{}: {}", title.trim_end_matches(':'), numbered.join(" "))
}

/// Keeps `c`, or drops it with why (`entry` is the answer's entry it came from).
fn push(out: &mut Parsed, c: Option<Candidate>, entry: &Value) {
    match c {
        None => out.drop("malformed", entry.to_string()),
        Some(c) if copies_example(&c.text) => out.drop("example", c.text),
        Some(c)
            if out
                .candidates
                .iter()
                .any(|o| o.text.eq_ignore_ascii_case(&c.text)) =>
        {
            out.drop("repeated", c.text)
        }
        Some(c) => out.candidates.push(c),
    }
}

/// What the prompts' own examples say (prompts/extract.txt, prompts/tom.txt), past the name
/// they start with: a small model copies an example into its answer with the speaker's name
/// put in ("Caroline shows more trust when the assistant admits mistakes", a procedure
/// "Deploying the blog: 1. Run make build." from a conversation about painting; seen with
/// Qwen2.5-Coder-1.5B on LoCoMo, docs/retrieval.md "Extraction with a real model").
/// Each example by the words that give it away together (a fact "moved to Denver in 2024" may
/// well be true, so the fact's example is left out).
const PROMPT_EXAMPLES: [&[&str]; 2] = [
    &["more trust when", "admits mistakes"],
    &["run make build", "copy dist/ to the server"],
];

/// Whether `text` repeats one of the prompts' examples.
pub fn copies_example(text: &str) -> bool {
    let t = text.to_lowercase();
    PROMPT_EXAMPLES
        .iter()
        .any(|words| words.iter().all(|w| t.contains(w)))
}

fn list<'a>(obj: &'a Map<String, Value>, k: &str) -> &'a [Value] {
    obj.get(k)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A model may wrap its JSON in a markdown fence although asked not to.
fn short_text(v: &Value) -> Option<String> {
    let t = text::check("semantic", v.as_str()?).ok()?;
    Some(sentence(&t))
}

fn opt_str(v: Option<&Value>, max: usize) -> Option<String> {
    let s = text::normalize(v?.as_str()?);
    (!s.is_empty() && s.chars().count() <= max).then_some(s)
}

fn category(v: Option<&Value>) -> Option<String> {
    let s = opt_str(v, MAX_CATEGORY_CHARS)?.to_lowercase();
    s.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == ' ' || c == '-')
        .then(|| s.replace([' ', '-'], "_"))
}

fn importance(v: Option<&Value>) -> i16 {
    v.and_then(Value::as_i64)
        .map(|i| i.clamp(1, 5) as i16)
        .unwrap_or(2)
}

fn tags(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| opt_str(Some(t), 40))
                .map(|t| t.to_lowercase())
                .take(8)
                .collect()
        })
        .unwrap_or_default()
}

/// Keeps at most [`MAX_PER_TURN`] facts and procedures per turn and `remaining` in all (the
/// tenant's daily cap), in the order given; returns the kept ones and how many were dropped.
pub fn cap(candidates: Vec<Candidate>, remaining: usize) -> (Vec<Candidate>, usize) {
    let mut kept: Vec<Candidate> = vec![];
    let mut dropped = 0;
    for c in candidates {
        let same_turn = kept
            .iter()
            .filter(|k| k.kind != Kind::Insight && k.seq == c.seq)
            .count();
        if kept.len() >= remaining || (c.kind != Kind::Insight && same_turn >= MAX_PER_TURN) {
            dropped += 1;
        } else {
            kept.push(c);
        }
    }
    (kept, dropped)
}

// ---------------------------------------------------------------------------- without an LLM

/// The deterministic path: from the user's turns, sentences that ask for something to be
/// remembered ("remember that …", "please note …", "don't forget …") and plain statements the
/// user makes about themselves in a closed set of forms ("I'm allergic to …", "I live in …",
/// "My sister is …"), each rewritten in the third person about `subject` (the message's
/// speaker name, else "The user"). Questions, hedged sentences and sentences about the
/// assistant are skipped.
pub fn rules(turns: &[Turn]) -> Vec<Candidate> {
    let mut out = vec![];
    for t in turns.iter().filter(|t| t.role == "user") {
        let subject = t
            .name
            .as_deref()
            .map(text::normalize)
            .filter(|n| !n.is_empty() && n.chars().count() <= MAX_ABOUT_CHARS)
            .unwrap_or_else(|| "The user".into());
        let mut n = 0;
        for s in crate::summary::sentences(&t.text)
            .iter()
            .flat_map(|s| clauses(s))
        {
            if n >= MAX_PER_TURN {
                break;
            }
            let Some(fact) = rule_fact(&s, &subject) else {
                continue;
            };
            let Ok(fact) = text::check("semantic", &fact) else {
                continue;
            };
            if out
                .iter()
                .any(|c: &Candidate| c.text.eq_ignore_ascii_case(&fact))
            {
                continue;
            }
            n += 1;
            out.push(Candidate {
                kind: Kind::Fact,
                seq: t.seq,
                category: rule_category(&fact).map(str::to_string),
                text: fact,
                about: t.name.clone().filter(|_| subject != "The user"),
                importance: 2,
                tags: vec![],
                supersedes: None,
                confidence: Some(if asked_to_remember(&s) {
                    ASKED_CONFIDENCE
                } else {
                    RULE_CONFIDENCE
                }),
            });
        }
    }
    out
}

/// The profile field a rule fact sets, named as the consent settings name them
/// (memory_core::consent): where someone lives is `city`, what they speak `language`, their
/// name `preferred_name`, their pronouns `pronouns`. Other facts get no category.
pub fn rule_category(fact: &str) -> Option<&'static str> {
    let l = fact.to_lowercase();
    let has = |p: &str| l.contains(p);
    if SINGLE_VALUED[0].iter().any(|p| has(&format!(" {p} "))) {
        Some("city")
    } else if has(" speaks ") {
        Some("language")
    } else if has("'s pronouns are ") {
        Some("pronouns")
    } else if has("'s name is ") || has(" goes by ") {
        Some("preferred_name")
    } else {
        None
    }
}

const REMEMBER: [&str; 8] = [
    "remember that ",
    "remember: ",
    "remember ",
    "note that ",
    "please note that ",
    "keep in mind that ",
    "don't forget that ",
    "do not forget that ",
];
const HEDGES: [&str; 14] = [
    "maybe", "might", "perhaps", "probably", "i think", "i guess", "not sure", "if ", "would",
    "could", "wonder", "should", "hope", "wish",
];
/// What may follow "I'm" / "I am" in a statement worth keeping: a role ("a nurse"), a
/// condition ("allergic to …"), an origin ("from Boston"), a status. "I'm tired", "I'm
/// looking for …" are moods and plans of the moment, not facts.
const AM_STARTS: [&str; 17] = [
    "a ",
    "an ",
    "allergic",
    "vegetarian",
    "vegan",
    "from ",
    "based in",
    "married",
    "divorced",
    "single",
    "engaged",
    "pregnant",
    "retired",
    "left-handed",
    "right-handed",
    "lactose",
    "originally from",
];
/// Verbs after "I" that state a lasting fact or preference.
const VERBS: [&str; 22] = [
    "live",
    "work",
    "moved",
    "was born",
    "grew up",
    "have",
    "prefer",
    "like",
    "love",
    "hate",
    "dislike",
    "enjoy",
    "study",
    "speak",
    "own",
    "use",
    "drive",
    "play",
    "teach",
    "volunteer",
    "adopted",
    "started",
];

/// A sentence's clauses joined by "and I" ("I'm a nurse and I live in Lisbon" states two facts,
/// of two fields): each is looked at on its own, as a sentence starting with "I".
fn clauses(sentence: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = sentence.to_string();
    loop {
        let lower = rest.to_lowercase();
        let cut = [", and i ", " and i "]
            .iter()
            .filter_map(|sep| lower.find(sep).map(|p| (p, sep.len())))
            .min();
        match cut {
            Some((p, len)) => {
                out.push(rest[..p].to_string());
                rest = format!("I {}", &rest[p + len..]);
            }
            None => {
                out.push(rest);
                return out;
            }
        }
    }
}

/// Lead-ins that do not change what the sentence states ("Oh, I live in …", "By the way, …").
const LEAD_INS: [&str; 12] = [
    "oh",
    "well",
    "so",
    "btw",
    "by the way",
    "actually",
    "also",
    "and",
    "anyway",
    "fyi",
    "just so you know",
    "for the record",
];

/// The sentence without a lead-in: a discourse marker from [`LEAD_INS`], or up to three words
/// before a colon ("Big news: I moved to Denver").
fn without_lead_in(s: &str) -> &str {
    let lower = s.to_lowercase();
    if let Some(p) = s.find(": ") {
        if s[..p].split_whitespace().count() <= 3 {
            return s[p + 2..].trim_start();
        }
    }
    for l in LEAD_INS {
        if let Some(rest) = lower.strip_prefix(l) {
            if let Some(r) = rest.strip_prefix(", ").or_else(|| rest.strip_prefix(" ")) {
                return &s[s.len() - r.len()..];
            }
        }
    }
    s
}

/// Whether a sentence asks for something to be remembered ("Please remember that ...").
fn asked_to_remember(sentence: &str) -> bool {
    let s = text::normalize(sentence.trim_end_matches(['.', '!']));
    let lower = without_lead_in(&s).to_lowercase();
    let asked = lower.strip_prefix("please ").unwrap_or(&lower);
    let asked = asked
        .strip_prefix("can you ")
        .or_else(|| asked.strip_prefix("could you "))
        .unwrap_or(asked);
    REMEMBER.iter().any(|r| asked.starts_with(r))
}

fn rule_fact(sentence: &str, subject: &str) -> Option<String> {
    let s = text::normalize(sentence.trim_end_matches(['.', '!']));
    let s = without_lead_in(&s).to_string();
    if s.is_empty() || s.contains('?') {
        return None;
    }
    let lower = s.to_lowercase();
    let words = lower.split_whitespace().count();
    if !(3..=40).contains(&words) {
        return None;
    }
    // "Please remember that …", "Remember: …": the user asked, so any clause is kept (in the
    // third person when it speaks of the user).
    let asked = lower.strip_prefix("please ").unwrap_or(&lower);
    let asked = asked
        .strip_prefix("can you ")
        .or_else(|| asked.strip_prefix("could you "))
        .unwrap_or(asked);
    for r in REMEMBER {
        if let Some(rest) = asked.strip_prefix(r) {
            let clause = &s[s.len() - rest.len()..];
            if clause.split_whitespace().count() < 2 {
                return None;
            }
            return Some(
                third_person(clause, subject).unwrap_or_else(|| crate::extract::sentence(clause)),
            );
        }
    }
    if HEDGES.iter().any(|h| contains_word(&lower, h))
        || contains_word(&lower, "you")
        || contains_word(&lower, "your")
    {
        return None;
    }
    let self_statement = if let Some(rest) = lower
        .strip_prefix("i'm ")
        .or_else(|| lower.strip_prefix("i am "))
    {
        AM_STARTS.iter().any(|a| rest.starts_with(a)) || years_old(rest)
    } else if let Some(rest) = lower.strip_prefix("i ") {
        let rest = rest
            .strip_prefix("don't ")
            .or_else(|| rest.strip_prefix("do not "))
            .unwrap_or(rest);
        VERBS.iter().any(|v| rest.starts_with(&format!("{v} ")))
    } else if let Some(rest) = lower
        .strip_prefix("i've got ")
        .or_else(|| lower.strip_prefix("i have "))
    {
        !rest.is_empty()
    } else if let Some(rest) = lower.strip_prefix("my ") {
        // "My sister is a nurse", "My favourite colour is green": a short noun phrase, then
        // "is"/"are"/"was".
        let ws: Vec<&str> = rest.split_whitespace().collect();
        ws.iter()
            .position(|w| matches!(*w, "is" | "are" | "was" | "lives" | "works"))
            .is_some_and(|p| (1..=3).contains(&p) && p + 1 < ws.len())
    } else {
        false
    };
    if !self_statement {
        return None;
    }
    third_person(&s, subject)
}

fn years_old(rest: &str) -> bool {
    let ws: Vec<&str> = rest.split_whitespace().collect();
    ws.len() >= 3 && ws[0].parse::<u32>().is_ok() && ws[1] == "years" && ws[2] == "old"
}

fn contains_word(hay: &str, w: &str) -> bool {
    if w.ends_with(' ') || w.contains(' ') {
        return hay.contains(w);
    }
    hay.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .any(|x| x == w)
}

/// First letter upper case, a full stop at the end.
fn sentence(s: &str) -> String {
    let s = s.trim();
    let mut c = s.chars();
    let mut out = match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => return String::new(),
    };
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

/// `clause` with the user's first person replaced by `subject`, or `None` when it does not
/// speak of the user. The verb after a leading "I" takes the third person ("I live" → "Sam
/// lives", "I don't" → "Sam doesn't"); later "my"/"me"/"I" become "Sam's"/"Sam".
fn third_person(clause: &str, subject: &str) -> Option<String> {
    let lower_subject = if subject == "The user" {
        "the user"
    } else {
        subject
    };
    let words: Vec<&str> = clause.split_whitespace().collect();
    let mut out: Vec<String> = vec![];
    let mut changed = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let (core, tail) = split_punct(w);
        let lc = core.to_lowercase();
        let who = if out.is_empty() {
            subject
        } else {
            lower_subject
        };
        match lc.as_str() {
            "i'm" | "i’m" => {
                out.push(format!("{who} is{tail}"));
                changed = true;
            }
            "i've" | "i’ve" => {
                // "I've got" → "has"; "I've been" → "has been".
                if words.get(i + 1).map(|n| n.to_lowercase()) == Some("got".into()) {
                    i += 1;
                }
                out.push(format!("{who} has{tail}"));
                changed = true;
            }
            "i'd" | "i’d" => {
                out.push(format!("{who} would{tail}"));
                changed = true;
            }
            "i" if tail.is_empty() => {
                out.push(who.to_string());
                changed = true;
                if let Some(next) = words.get(i + 1) {
                    let (nc, nt) = split_punct(next);
                    out.push(format!("{}{nt}", third_person_verb(nc)));
                    i += 1;
                }
            }
            "my" => {
                out.push(format!("{who}'s{tail}"));
                changed = true;
            }
            "me" | "myself" => {
                out.push(format!("{who}{tail}"));
                changed = true;
            }
            "mine" => {
                out.push(format!("{who}'s{tail}"));
                changed = true;
            }
            _ => out.push(w.to_string()),
        }
        i += 1;
    }
    changed.then(|| sentence(&out.join(" ")))
}

fn split_punct(w: &str) -> (&str, &str) {
    let end = w.trim_end_matches([',', ';', ':', '.', '!']).len();
    (&w[..end], &w[end..])
}

/// The third-person singular of the verb after "I".
fn third_person_verb(v: &str) -> String {
    let lc = v.to_lowercase();
    match lc.as_str() {
        "am" => return "is".into(),
        "have" => return "has".into(),
        "do" => return "does".into(),
        "don't" | "don’t" => return "doesn't".into(),
        "was" | "can" | "can't" | "will" | "won't" | "must" | "had" | "did" | "didn't"
        | "could" | "would" | "should" | "may" | "might" => return lc,
        _ => {}
    }
    // A past tense stays as it is ("moved", "grew", "got").
    const PAST: [&str; 16] = [
        "grew", "got", "went", "had", "bought", "left", "met", "began", "became", "took", "made",
        "found", "gave", "wrote", "ran", "lost",
    ];
    if lc.ends_with("ed") || PAST.contains(&lc.as_str()) || !lc.chars().all(char::is_alphabetic) {
        return v.to_string();
    }
    if lc.ends_with('y')
        && !lc.ends_with("ay")
        && !lc.ends_with("ey")
        && !lc.ends_with("oy")
        && !lc.ends_with("uy")
    {
        return format!("{}ies", &v[..v.len() - 1]);
    }
    if ["s", "sh", "ch", "x", "z", "o"]
        .iter()
        .any(|e| lc.ends_with(e))
    {
        return format!("{v}es");
    }
    format!("{v}s")
}

// ---------------------------------------------------------------------- supersede, no LLM

/// Predicates whose subject has one value at a time; predicates of one group replace each
/// other ("moved to Denver" ends "lives in Boston").
const SINGLE_VALUED: [&[&str]; 7] = [
    &[
        "lives in",
        "lives at",
        "moved to",
        "is based in",
        "relocated to",
        "now lives in",
    ],
    &["works as", "is employed as", "now works as"],
    &[
        "works at",
        "works for",
        "is employed at",
        "is employed by",
        "now works at",
        "now works for",
    ],
    &["is married to"],
    &["is engaged to"],
    &["is dating"],
    &["'s name is", "is called", "is named"],
];

/// The conservative rule that lets a new fact supersede an old one without an LLM: the same
/// subject (its first words up to a single-valued predicate, compared case-insensitively), a
/// predicate of the same group, and a different value, with nothing but the value differing
/// (at most 6 words of value on each side). "Sam lives in Denver." supersedes "Sam lives in
/// Boston."; "Sam likes cats." never supersedes "Sam likes dogs." (a preference can have many
/// values), nor does "Sam's sister lives in Rome." touch "Sam lives in Boston." (another
/// subject).
pub fn supersedes(new: &str, old: &str) -> bool {
    match (single_valued(new), single_valued(old)) {
        (Some((s1, g1, v1)), Some((s2, g2, v2))) => {
            s1 == s2 && g1 == g2 && v1 != v2 && !v1.is_empty() && !v2.is_empty()
        }
        _ => false,
    }
}

/// (subject, predicate group, value) of a sentence with a single-valued predicate.
fn single_valued(s: &str) -> Option<(String, usize, String)> {
    let lower = text::normalize(s).to_lowercase();
    let lower = lower.trim_end_matches(['.', '!']);
    for (g, preds) in SINGLE_VALUED.iter().enumerate() {
        for p in *preds {
            let needle = if p.starts_with('\'') {
                p.to_string()
            } else {
                format!(" {p} ")
            };
            let Some(at) = lower.find(&needle) else {
                continue;
            };
            let subject = lower[..at].trim().to_string();
            let value = lower[at + needle.len()..].trim().to_string();
            let sw = subject.split_whitespace().count();
            let vw = value.split_whitespace().count();
            if (1..=3).contains(&sw) && (1..=6).contains(&vw) && !subject.contains("'s ") {
                return Some((subject, g, value));
            }
        }
    }
    None
}

#[cfg(test)]
mod tom_tests {
    use super::*;

    fn turn(role: &str, text: &str) -> Turn {
        Turn {
            seq: 1,
            role: role.into(),
            name: None,
            text: text.into(),
        }
    }

    #[test]
    fn the_theory_of_mind_pass_keeps_to_the_seeds_inputs_and_caps() {
        let long = "x".repeat(3000);
        let input: Value = serde_json::from_str(&tom_input(
            &(0..9).map(|i| format!("a{i}")).collect::<Vec<_>>(),
            &(0..9).map(|i| format!("n{i}")).collect::<Vec<_>>(),
            &[turn("user", &long), turn("assistant", "the end")],
        ))
        .unwrap();
        assert_eq!(input["activity"].as_array().unwrap().len(), TOM_ACTIVITY);
        assert_eq!(input["new"].as_array().unwrap().len(), TOM_NEW);
        let snippet = input["snippet"].as_str().unwrap();
        assert_eq!(snippet.chars().count(), TOM_SNIPPET_CHARS);
        assert!(snippet.ends_with("assistant: the end"));

        let a = r#"{"insights": [
            {"summary": "Sam prefers short answers.", "field": "tone", "confidence": 0.95},
            {"summary": "Sam trusts the assistant more after it admitted a mistake.", "importance": 9},
            {"summary": "x"},
            {"summary": "Sam is anxious about deadlines."},
            {"summary": "Sam enjoys jokes."}]}"#;
        let got = parse_tom(a, 7).unwrap();
        assert_eq!(got.len(), MAX_INSIGHTS);
        assert_eq!(got[0].field.as_deref(), Some("tone"));
        assert_eq!(got[0].confidence, Some(0.95));
        assert_eq!(got[1].memory.importance, 5);
        assert_eq!(got[1].memory.category.as_deref(), Some(INSIGHT_CATEGORY));
        assert!(got
            .iter()
            .all(|i| i.memory.kind == Kind::Insight && i.memory.seq == 7));
        assert!(parse_tom(r#"{"insights": []}"#, 1).unwrap().is_empty());
        assert!(parse_tom("I think Sam is nice.", 1).is_err());
        let long = format!(r#"{{"insights": [{{"summary": "{}"}}]}}"#, "y ".repeat(200));
        assert!(
            parse_tom(&long, 1).unwrap().is_empty(),
            "over 280 characters"
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn entries_that_copy_the_prompts_examples_are_dropped() {
        use super::*;
        let turns = [Turn {
            seq: 1,
            role: "user".into(),
            name: Some("Caroline".into()),
            text: "I painted a sunset over the lake last week.".into(),
        }];
        let answer = r#"{"facts": [{"turn": 1, "text": "Caroline painted a sunset over a lake.", "about": "Caroline"}],
            "insights": [],
            "procedures": [{"turn": 1, "title": "Deploying the blog", "steps": ["Run make build.", "Copy dist/ to the server."]}]}"#;
        let p = parse_answer(answer, &turns, &[], false).unwrap();
        assert_eq!(p.candidates.len(), 1);
        assert_eq!(p.rejected(), 1);
        assert!(copies_example(
            "Caroline shows more trust when the assistant admits mistakes."
        ));
        assert!(!copies_example(
            "Caroline shows more trust when her friends listen."
        ));
        let tom = parse_tom(
            r#"{"insights": [{"summary": "Melanie shows more trust when Caroline admits mistakes."}]}"#,
            1,
        )
        .unwrap();
        assert!(tom.is_empty());
    }

    use super::*;

    fn user(seq: i64, name: Option<&str>, text: &str) -> Turn {
        Turn {
            seq,
            role: "user".into(),
            name: name.map(str::to_string),
            text: text.into(),
        }
    }

    fn texts(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn rules_keep_what_the_user_says_of_themselves_and_asks_to_remember() {
        let turns = vec![
            user(1, Some("Sam"), "Hi! I'm allergic to peanuts. I'm tired today. Can you help me plan a trip?"),
            Turn { seq: 2, role: "assistant".into(), name: None, text: "I love planning trips. I live in the cloud.".into() },
            user(3, Some("Sam"), "I moved to Denver in 2024. My sister is a nurse in Rome. I think I like jazz."),
            user(4, None, "Please remember that my wifi password is hunter2. Remember the dentist is on Friday."),
            user(5, None, "I work as a nurse at the city hospital. Do I like you? I like your idea."),
            user(6, Some("Sam"), "Big news: I moved to Austin in 2025. By the way, I speak Portuguese. So I guess I'm a teacher now."),
            user(7, Some("Rui"), "I'm a nurse and I live in Lisbon."),
        ];
        let got = rules(&turns);
        assert_eq!(
            texts(&got),
            vec![
                "Sam is allergic to peanuts.",
                "Sam moved to Denver in 2024.",
                "Sam's sister is a nurse in Rome.",
                "The user's wifi password is hunter2.",
                "The dentist is on Friday.",
                "The user works as a nurse at the city hospital.",
                "Sam moved to Austin in 2025.",
                "Sam speaks Portuguese.",
                "Rui is a nurse.",
                "Rui lives in Lisbon.",
            ]
        );
        assert_eq!(got[0].seq, 1);
        let cats: Vec<Option<&str>> = got.iter().map(|c| c.category.as_deref()).collect();
        assert_eq!(
            cats,
            vec![
                None,
                Some("city"),
                None,
                None,
                None,
                None,
                Some("city"),
                Some("language"),
                None,
                Some("city")
            ]
        );
        assert_eq!(got[0].about.as_deref(), Some("Sam"));
        assert_eq!(got[3].about, None);
        assert!(got.iter().all(|c| c.kind == Kind::Fact));
    }

    #[test]
    fn third_person_verbs() {
        assert_eq!(
            third_person("I live in Boston", "Sam").unwrap(),
            "Sam lives in Boston."
        );
        assert_eq!(
            third_person("I don't eat meat", "Sam").unwrap(),
            "Sam doesn't eat meat."
        );
        assert_eq!(
            third_person("I study law", "Sam").unwrap(),
            "Sam studies law."
        );
        assert_eq!(
            third_person("I teach math to my kids", "Ana").unwrap(),
            "Ana teaches math to Ana's kids."
        );
        assert_eq!(
            third_person("I've got two cats", "Ana").unwrap(),
            "Ana has two cats."
        );
        assert_eq!(
            third_person("I have a dog named Biscuit", "Sam").unwrap(),
            "Sam has a dog named Biscuit."
        );
        assert_eq!(third_person("the meeting is at noon", "Sam"), None);
    }

    /// Two known memories shown with a batch.
    const KNOWN2: [&str; 2] = ["Sam lived in Boston.", "Sam works nights."];

    #[test]
    fn answers_are_checked_against_the_batch() {
        let turns = vec![
            user(7, Some("Sam"), "I moved to Denver."),
            user(
                8,
                Some("Sam"),
                "To deploy: build, then copy. It supersedes something never shown.",
            ),
        ];
        let a = r#"```json
        {"facts": [
            {"turn": 7, "text": "Sam moved to Denver", "about": "Sam", "category": "Location", "importance": 9, "supersedes": 1},
            {"turn": 3, "text": "From a turn outside the batch."},
            {"turn": 7, "text": ""},
            {"turn": 7, "text": "Sam moved to Denver."},
            {"turn": 8, "text": "Sam supersedes something never shown.", "supersedes": 4}
         ],
         "insights": [{"summary": "Sam likes short answers.", "tags": ["Style"]}],
         "procedures": [{"turn": 8, "title": "Deploy", "steps": ["Build.", "Copy."]}, {"turn": 8, "title": "Empty", "steps": []}]}
        ```"#;
        let p = parse_answer(a, &turns, &KNOWN2, true).unwrap();
        assert_eq!(p.rejected(), 4);
        // Each dropped entry says why.
        let why: Vec<&str> = p.dropped.iter().map(|d| d.reason).collect();
        assert_eq!(
            why,
            ["ungrounded", "malformed", "repeated", "malformed"],
            "{:?}",
            p.dropped
        );
        let f = &p.candidates[0];
        assert_eq!(
            (f.seq, f.text.as_str(), f.importance, f.supersedes),
            (7, "Sam moved to Denver.", 5, Some(0))
        );
        assert_eq!(f.category.as_deref(), Some("location"));
        // A memory never shown (4 of 2): the fact stands, superseding nothing.
        let f = &p.candidates[1];
        assert_eq!(
            (f.seq, f.text.as_str(), f.supersedes),
            (8, "Sam supersedes something never shown.", None)
        );
        assert_eq!(p.candidates[2].kind, Kind::Insight);
        assert_eq!(p.candidates[2].category.as_deref(), Some(INSIGHT_CATEGORY));
        assert_eq!(p.candidates[2].tags, vec!["style"]);
        assert_eq!(p.candidates[3].text, "Deploy: 1. Build. 2. Copy.");
        assert_eq!(p.candidates[3].kind.memory_kind(), "procedural");
        // Insights not allowed: dropped, not an error.
        let p = parse_answer(a, &turns, &KNOWN2, false).unwrap();
        assert!(p.candidates.iter().all(|c| c.kind != Kind::Insight));
        // Prose, a refusal, truncated JSON, an object of something else: errors.
        for bad in [
            "I can't help with that.",
            "{\"facts\": [",
            "[]",
            "{\"answer\": 1}",
        ] {
            assert!(parse_answer(bad, &turns, &[], true).is_err(), "{bad}");
        }
        assert_eq!(
            parse_answer(r#"{"facts": []}"#, &turns, &[], true).unwrap(),
            Parsed::default()
        );
        // A supersede of 0 (the model counting from zero), or of a string, names nothing: the
        // fact stands and supersedes nothing.
        for n in ["0", "\"1\"", "-1", "2.5"] {
            let a = format!(
                r#"{{"facts": [{{"turn": 7, "text": "Sam moved to Denver.", "supersedes": {n}}}]}}"#
            );
            let p = parse_answer(&a, &turns, &KNOWN2, false).unwrap();
            assert_eq!((p.rejected(), p.candidates.len()), (0, 1), "{n}");
            assert_eq!(p.candidates[0].supersedes, None, "{n}");
        }
        // What the batch does not say is made up: dropped and counted.
        let made_up = r#"{"facts": [{"turn": 7, "text": "Sam breeds horses in Montana."}],
            "procedures": [{"turn": 8, "title": "Starting a studio", "steps": ["Choose a location.", "Get a license."]}]}"#;
        let p = parse_answer(made_up, &turns, &[], false).unwrap();
        assert_eq!((p.candidates.len(), p.rejected()), (0, 2));
    }

    /// A conversation of two named speakers, as LoCoMo's (the turns the issue's cases came from).
    fn two_speakers() -> Vec<Turn> {
        vec![
            user(10, Some("Melanie"), "Wow, that agency looks great! What made you pick it?"),
            user(
                11,
                Some("Caroline"),
                "I chose them 'cause they help LGBTQ+ folks with adoption. Their inclusivity really spoke to me.",
            ),
            user(12, Some("Melanie"), "Wow Caroline, that's so lovely. I'm painting again, a sunset over a lake."),
        ]
    }

    fn one_fact(turns: &[Turn], fact: &str) -> Parsed {
        parse_answer(&format!(r#"{{"facts": [{fact}]}}"#), turns, &[], false).unwrap()
    }

    #[test]
    fn a_fact_is_attached_to_the_turn_that_says_it() {
        let turns = two_speakers();
        let text = "Caroline chose the agency because they help LGBTQ+ folks with adoption.";
        // No turn, a turn outside the batch, a turn as a string, another speaker's turn that
        // does not name her: each goes to Caroline's own turn, which says it.
        for turn in [
            r#""#,
            r#""turn": 3, "#,
            r#""turn": "11", "#,
            r#""turn": 10, "#,
        ] {
            let p = one_fact(&turns, &format!(r#"{{{turn}"text": "{text}"}}"#));
            assert_eq!(
                (p.candidates.len(), p.rejected()),
                (1, 0),
                "{turn} {:?}",
                p.dropped
            );
            assert_eq!(p.candidates[0].seq, 11, "{turn}");
        }
        // Another speaker's turn that names her can carry it, when none of hers says it.
        let p = one_fact(
            &turns,
            r#"{"turn": 12, "text": "Caroline's news is lovely."}"#,
        );
        assert_eq!(p.candidates[0].seq, 12, "{:?}", p.dropped);
        // Her own turn stands as given; she is whom it is about when the model did not say.
        let p = one_fact(
            &turns,
            r#"{"turn": 11, "text": "Caroline values inclusivity."}"#,
        );
        assert_eq!(p.candidates[0].seq, 11);
        assert_eq!(p.candidates[0].about.as_deref(), Some("Caroline"));
        let p = one_fact(
            &turns,
            r#"{"turn": 11, "about": "Ana", "text": "Caroline values inclusivity."}"#,
        );
        assert_eq!(p.candidates[0].about.as_deref(), Some("Ana"));
        // Melanie's painting given to Caroline's turn, which neither says it nor names her:
        // moved to Melanie's own turn.
        let p = one_fact(
            &turns,
            r#"{"turn": 11, "text": "Melanie is painting a sunset over a lake."}"#,
        );
        assert_eq!((p.candidates.len(), p.candidates[0].seq), (1, 12));
        // A fact about Melanie that no turn of hers, nor one naming her, says: the wrong speaker.
        let p = one_fact(
            &turns,
            r#"{"turn": 11, "text": "Melanie chose the agency because they help LGBTQ+ folks with adoption."}"#,
        );
        assert_eq!(
            (p.candidates.len(), p.dropped[0].reason),
            (0, "wrong_speaker")
        );
        // With no turn at all, and none saying it: malformed, as before.
        let p = one_fact(
            &turns,
            r#"{"text": "Melanie chose the agency because they help LGBTQ+ folks with adoption."}"#,
        );
        assert_eq!(p.dropped[0].reason, "malformed");
    }

    #[test]
    fn a_fact_keeps_only_what_it_says_in_the_third_person() {
        let turns = vec![user(
            17,
            Some("Gina"),
            "I used to compete in a few dance competitions and shows - my fav memory was when my team won first place. It was awesome!",
        )];
        let p = one_fact(
            &turns,
            r#"{"turn": 17, "text": "Gina used to compete in a few dance competitions and shows - my fav memory was when my team won first place."}"#,
        );
        assert_eq!(
            texts(&p.candidates),
            ["Gina used to compete in a few dance competitions and shows."]
        );
        // A sentence in the first person goes; the rest stays.
        let p = one_fact(
            &turns,
            r#"{"turn": 17, "text": "Gina competed in dance shows. My team won first place."}"#,
        );
        assert_eq!(texts(&p.candidates), ["Gina competed in dance shows."]);
        // Nothing but the first person: dropped, with why.
        for t in [
            "I used to compete in dance shows.",
            "We won first place!",
            "Our team won.",
        ] {
            let p = one_fact(&turns, &format!(r#"{{"turn": 17, "text": "{t}"}}"#));
            assert_eq!(
                (p.candidates.len(), p.dropped[0].reason),
                (0, "first_person"),
                "{t}"
            );
        }
        // "US" is a country, and "I" inside a name's initials is not asked about.
        let turns = vec![user(4, Some("Jon"), "I moved to the US last year.")];
        let p = one_fact(
            &turns,
            r#"{"turn": 4, "text": "Jon moved to the US last year."}"#,
        );
        assert_eq!(p.candidates.len(), 1, "{:?}", p.dropped);
    }

    #[test]
    fn a_procedure_is_said_in_its_turn_or_the_one_before() {
        let turns = vec![
            user(
                1,
                Some("Jon"),
                "I'm looking for a studio spot with good natural light and a sprung floor.",
            ),
            user(
                2,
                Some("Gina"),
                "How do you set up the website for the store?",
            ),
            user(
                3,
                Some("Jon"),
                "First pick a domain, then a theme, then add the products.",
            ),
            user(
                4,
                Some("Gina"),
                "I just launched an ad campaign for my clothing store!",
            ),
        ];
        let procedure = |turn: i64, title: &str, steps: &str| {
            parse_answer(
                &format!(r#"{{"procedures": [{{"turn": {turn}, "title": "{title}", "steps": {steps}}}]}}"#),
                &turns,
                &[],
                false,
            )
            .unwrap()
        };
        // Said in its turn, or answered there to the turn before: kept.
        let p = procedure(
            3,
            "Setting up the store's website",
            r#"["Pick a domain.", "Pick a theme.", "Add the products."]"#,
        );
        assert_eq!(p.candidates.len(), 1, "{:?}", p.dropped);
        // Its words the batch's, but from Jon's search two turns away: made up for Gina's turn.
        let p = procedure(
            4,
            "Launching the clothing store",
            r#"["Find a spot with good natural light.", "Get a sprung floor."]"#,
        );
        assert_eq!((p.candidates.len(), p.dropped[0].reason), (0, "ungrounded"));
    }

    #[test]
    fn a_fact_that_names_nobody_is_dropped() {
        let turns = vec![
            user(27, Some("Gina"), "Let's do it together, Jon!"),
            user(28, Some("Jon"), "Yeah, awesome! Glad to be part of it."),
        ];
        let p = one_fact(
            &turns,
            r#"{"turn": 28, "text": "Yeah, awesome! Glad to be part of it."}"#,
        );
        assert_eq!(
            (p.candidates.len(), p.dropped[0].reason),
            (0, "unattributed")
        );
        // An `about` of nobody the batch names does not say whom either.
        let p = one_fact(
            &turns,
            r#"{"turn": 28, "about": "Mia", "text": "Glad to be part of it."}"#,
        );
        assert_eq!(p.candidates.len(), 0);
        // Naming a speaker, the `about` given, or "the user" is enough.
        for fact in [
            r#"{"turn": 28, "text": "Jon is glad to be part of it."}"#,
            r#"{"turn": 28, "about": "Jon", "text": "Glad to be part of it, says Jon."}"#,
            // The actor says whom, though the text does not.
            r#"{"turn": 28, "about": "Jon", "text": "Glad to be part of it."}"#,
            r#"{"turn": 28, "text": "The user is glad to be part of it."}"#,
        ] {
            let p = one_fact(&turns, fact);
            assert_eq!(p.candidates.len(), 1, "{fact} {:?}", p.dropped);
        }
    }

    #[test]
    fn a_fact_naming_what_the_batch_does_not_name_is_made_up() {
        let turns = vec![Turn {
            seq: 4,
            role: "user".into(),
            name: Some("Ana".into()),
            text: "I am vegetarian, and my sister Eva lives in Porto with her dog.".into(),
        }];
        let fact = |text: &str| format!(r#"{{"facts": [{{"turn": 4, "text": "{text}"}}]}}"#);
        for kept in [
            "Eva lives in Porto.",
            "Ana's sister Eva lives in Porto.",
            "The user is vegetarian; her sister Eva lives in Porto.",
            "Eva lives in Porto with her dog since 2021.",
            "Eva moved to Porto From abroad.",
            "The dog is Eva's.",
        ] {
            let p = parse_answer(&fact(kept), &turns, &[], false).unwrap();
            assert_eq!((p.candidates.len(), p.rejected()), (1, 0), "{kept}");
        }
        // Most words the batch's, the place not: the model's own.
        for made_up in [
            "Eva lives in Lisbon.",
            "Ana's sister Eva lives in Porto with Marco.",
        ] {
            let p = parse_answer(&fact(made_up), &turns, &[], false).unwrap();
            assert_eq!((p.candidates.len(), p.rejected()), (0, 1), "{made_up}");
            assert_eq!(p.dropped[0].reason, "unnamed", "{made_up}");
            assert_eq!(p.dropped[0].text, made_up);
        }
        // A name a known memory shown with the batch gives is said.
        let p = parse_answer(
            &fact("Ana's sister Eva lives in Porto with Marco."),
            &turns,
            &["Marco is Eva's husband."],
            false,
        )
        .unwrap();
        assert_eq!((p.candidates.len(), p.rejected()), (1, 0));
    }

    #[test]
    fn extracted_facts_carry_a_confidence() {
        let turns = vec![Turn {
            seq: 3,
            role: "user".into(),
            name: None,
            text: "I live in Porto. Please remember that my dentist is Dr. Lee.".into(),
        }];
        let got: Vec<Option<f64>> = rules(&turns).iter().map(|c| c.confidence).collect();
        assert_eq!(got, vec![Some(RULE_CONFIDENCE), Some(ASKED_CONFIDENCE)]);
        let turns = vec![Turn {
            text: "I live in Porto and I love tea and cake.".into(),
            ..turns[0].clone()
        }];
        let p = parse_answer(
            r#"{"facts": [{"turn": 3, "text": "Sam lives in Porto.", "confidence": 0.7},
                          {"turn": 3, "text": "Sam loves tea.", "confidence": 7},
                          {"turn": 3, "text": "Sam loves cake."}]}"#,
            &turns,
            &[],
            false,
        )
        .unwrap();
        let got: Vec<Option<f64>> = p.candidates.iter().map(|c| c.confidence).collect();
        assert_eq!(got, vec![Some(0.7), None, None]);
    }

    #[test]
    fn caps_per_turn_and_per_day() {
        let c = |seq: i64, t: &str| Candidate {
            kind: Kind::Fact,
            seq,
            text: t.into(),
            about: None,
            category: None,
            importance: 2,
            tags: vec![],
            supersedes: None,
            confidence: None,
        };
        let all = vec![
            c(1, "a"),
            c(1, "b"),
            c(1, "c"),
            c(1, "d"),
            c(2, "e"),
            c(2, "f"),
        ];
        let (kept, dropped) = cap(all.clone(), 100);
        assert_eq!(texts(&kept), vec!["a", "b", "c", "e", "f"]);
        assert_eq!(dropped, 1);
        let (kept, dropped) = cap(all, 2);
        assert_eq!((kept.len(), dropped), (2, 4));
    }

    #[test]
    fn the_no_llm_supersede_rule_is_conservative() {
        assert!(supersedes("Sam lives in Denver.", "Sam lives in Boston."));
        assert!(supersedes(
            "Sam moved to Denver in 2024.",
            "Sam lives in Boston."
        ));
        assert!(supersedes("Sam works at Acme.", "Sam works for Globex."));
        assert!(supersedes(
            "The user's name is Samuel.",
            "The user's name is Sam."
        ));
        assert!(!supersedes("Sam lives in Boston.", "Sam lives in Boston."));
        assert!(!supersedes("Sam likes cats.", "Sam likes dogs."));
        assert!(!supersedes(
            "Sam's sister lives in Rome.",
            "Sam lives in Boston."
        ));
        assert!(!supersedes("Ana lives in Denver.", "Sam lives in Boston."));
        assert!(!supersedes(
            "Sam works as a nurse.",
            "Sam works at the city hospital."
        ));
        assert!(!supersedes(
            "Sam lives in Denver with a dog named Biscuit and two cats and a parrot.",
            "Sam lives in Boston."
        ));
    }

    #[test]
    fn the_input_numbers_known_memories_from_one() {
        let t = vec![user(3, None, "hello there")];
        let v: Value = serde_json::from_str(&llm_input(
            &[],
            &t,
            &[("Sam lives in Boston.".into(), Some("Sam".into()))],
            false,
            10,
        ))
        .unwrap();
        assert_eq!(v["known"][0]["n"], 1);
        assert_eq!(v["turns"][0]["text"], "hello ther");
        assert_eq!(v["insights"], false);
    }
}
