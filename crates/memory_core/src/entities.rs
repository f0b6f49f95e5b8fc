//! Entities (docs/design.md "Entities"): the people, places,
//! projects and things memories are about, each found again by any of its names. This is the
//! resolver, without an LLM and without Postgres: which names a text mentions, which known
//! entity a name is, and which entities a query names. src/ops/entities.rs keeps the rows.
//!
//! # Why rules and not a model
//! Every write resolves its names, so the resolver must cost microseconds and never wait on a
//! remote model (the project's rule for anything an application calls). Names in what people
//! write are mostly capitalised words: a run of them is a mention, common capitalised words
//! (pronouns, greetings, days, months, the words that commonly start a sentence) excepted. A
//! name that is also a common word ("Will", "May") is only taken at the start of a sentence
//! when the tenant knows it already: that is where English capitalises everything. A mention is the known entity whose name or
//! alias it is once normalised; else one whose name is close in pg_trgm's trigram similarity
//! (a misspelling: "Carolline"); else, for a first name alone, the one person whose full name
//! starts with it; else a new entity. Aliases come from those matches and from what the text
//! says ("Robert, who goes by Bob").

use std::collections::BTreeSet;

/// Entity types.
pub const TYPES: [&str; 5] = ["person", "place", "organization", "project", "thing"];

/// A known entity, as the resolver sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub aliases: Vec<String>,
}

/// A name a text mentions, with the type its context suggests.
#[derive(Debug, Clone, PartialEq)]
pub struct Mention {
    pub name: String,
    pub kind: Option<&'static str>,
    /// One word at the start of a sentence: a name only if the tenant knows it already.
    pub initial: bool,
}

/// Capitalised words that name nobody: they are capitalised because they start a sentence.
const COMMON: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'll",
    "i'd",
    "the",
    "a",
    "an",
    "my",
    "our",
    "your",
    "his",
    "her",
    "their",
    "its",
    "it",
    "it's",
    "this",
    "that",
    "these",
    "those",
    "we",
    "you",
    "he",
    "she",
    "they",
    "me",
    "us",
    "yes",
    "no",
    "not",
    "hi",
    "hey",
    "hello",
    "thanks",
    "thank",
    "ok",
    "okay",
    "oh",
    "wow",
    "well",
    "so",
    "and",
    "but",
    "or",
    "if",
    "when",
    "what",
    "where",
    "why",
    "how",
    "who",
    "which",
    "also",
    "just",
    "sure",
    "great",
    "good",
    "nice",
    "congrats",
    "congratulations",
    "haha",
    "lol",
    "dear",
    "yeah",
    "yay",
    "awesome",
    "cool",
    "sorry",
    "please",
    "let",
    "let's",
    "do",
    "did",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "would",
    "will",
    "have",
    "had",
    "has",
    "there",
    "here",
    "then",
    "now",
    "today",
    "tomorrow",
    "yesterday",
    "user",
    "assistant",
    "episode",
    "on",
    "in",
    "at",
    "for",
    "with",
    "after",
    "before",
    "since",
    "during",
    "about",
    "from",
    "to",
    "by",
    "as",
    "of",
    "once",
    "maybe",
    "every",
    "last",
    "next",
    "some",
    "all",
    "any",
    "each",
    "both",
    "one",
    "two",
    "three",
    "first",
    "second",
    "because",
    "while",
    "although",
    "though",
    "until",
    "right",
    "actually",
    "anyway",
    "definitely",
    "absolutely",
    "totally",
    "really",
    "very",
    "that's",
    "there's",
    "what's",
    "how's",
    "here's",
    "btw",
    "glad",
    "happy",
    "love",
    "loved",
    "looking",
    "speaking",
    "talking",
    "yep",
    "nope",
    "nah",
    "yup",
    "hmm",
    "honestly",
    "interesting",
    "exactly",
    "true",
    "amazing",
    "wonderful",
    "beautiful",
    "fantastic",
    "same",
    "sounds",
    "take",
    "keep",
    "make",
    "see",
    "check",
    "tell",
    "remember",
    "don't",
    "can't",
    "won't",
    "didn't",
    "isn't",
    "wasn't",
    "doesn't",
    "haven't",
    "nothing",
    "something",
    "everything",
    "anything",
    "someone",
    "everyone",
    "anyone",
    "nobody",
    "always",
    "never",
    "sometimes",
    "often",
    "usually",
    "still",
    "even",
    "only",
    "most",
    "many",
    "much",
    "more",
    "less",
    "no one",
    "good luck",
    "bye",
    "goodbye",
    "cheers",
    "welcome",
    "agreed",
    "indeed",
    "besides",
    "however",
    "also",
    "plus",
    "instead",
    "otherwise",
    "meanwhile",
    "finally",
    "lately",
    "recently",
    "soon",
    "later",
    "tonight",
    "morning",
    "evening",
    "night",
    "afternoon",
    "go",
    "get",
    "got",
    "went",
    "had",
    "being",
    "having",
    "trying",
    "thinking",
    "feeling",
    "seems",
    "seeing",
    "knowing",
    "guess",
    "wish",
    "hope",
    "mine",
    "yours",
    "ours",
    "theirs",
    "himself",
    "herself",
    "myself",
    "yourself",
    "ourselves",
    "themselves",
    "such",
    "another",
    "other",
    "others",
    "either",
    "neither",
    "whatever",
    "whenever",
    "wherever",
    "whoever",
    "omg",
    "ah",
    "aw",
    "aww",
    "ha",
    "hah",
    "huh",
    "um",
    "uh",
    "yo",
    "hiya",
    "sweet",
    "perfect",
    "right",
    "fine",
    "alright",
    "lovely",
    "fun",
    "funny",
    "crazy",
    "totally",
    "indeed",
    "super",
    "pretty",
];

/// Names that are also common words: at the start of a sentence they are only taken for a
/// name the tenant knows ("Will you come?" is no one; "Will" mid-sentence is someone).
const AMBIGUOUS: &[&str] = &[
    "will", "may", "rose", "mark", "bill", "grace", "joy", "june", "faith", "art", "sandy",
    "summer", "april", "august", "hunter", "chase", "cash", "sunny", "hope", "ray", "dawn", "rich",
    "drew", "pat", "sue", "frank", "gene", "jack", "max", "miles", "penny", "robin", "skip", "sky",
    "star", "tom", "victor", "wade", "woody", "jean", "holly", "ivy", "lily",
];

/// Days are not entities (nor are months: crate::when::MONTHS).
const DAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Words before a place.
const PLACE_BEFORE: [&str; 7] = ["in", "from", "at", "near", "visited", "visit", "visiting"];
/// Words before "to" that make what follows a place ("moved to Denver", not "said hi to Mel").
const MOTION: [&str; 14] = [
    "moved",
    "move",
    "moving",
    "went",
    "go",
    "going",
    "flew",
    "fly",
    "drove",
    "travelled",
    "traveled",
    "trip",
    "relocated",
    "headed",
];
/// Last words of an organisation's name.
const ORG_LAST: [&str; 13] = [
    "inc",
    "corp",
    "corporation",
    "llc",
    "ltd",
    "company",
    "co",
    "university",
    "college",
    "school",
    "hospital",
    "bank",
    "group",
];

/// What `COMMON`, `DAYS` and `PLACE_BEFORE` are for English, in German, French, Spanish,
/// Portuguese and Italian: the words that start sentences without naming anyone (pronouns,
/// articles, greetings, conjunctions), the days, and the prepositions before a place.
struct Lexicon {
    common: &'static [&'static str],
    days: [&'static str; 7],
    place_before: &'static [&'static str],
}

fn lexicon(language: &str) -> Option<Lexicon> {
    Some(match language {
        "de" => Lexicon {
            common: &[
                "ich",
                "du",
                "er",
                "sie",
                "es",
                "wir",
                "ihr",
                "der",
                "die",
                "das",
                "den",
                "dem",
                "des",
                "ein",
                "eine",
                "einen",
                "einem",
                "einer",
                "mein",
                "meine",
                "dein",
                "deine",
                "sein",
                "seine",
                "unser",
                "unsere",
                "hallo",
                "hi",
                "danke",
                "ja",
                "nein",
                "und",
                "aber",
                "oder",
                "als",
                "wenn",
                "dann",
                "auch",
                "heute",
                "gestern",
                "morgen",
                "wo",
                "wie",
                "was",
                "wer",
                "wann",
                "warum",
                "welche",
                "welcher",
                "welches",
                "gut",
                "toll",
                "super",
                "cool",
                "wow",
                "oh",
                "ach",
                "na",
                "genau",
                "klar",
                "schön",
                "letzte",
                "letzten",
                "nächste",
                "nächsten",
                "im",
                "am",
                "in",
                "mit",
                "nach",
                "vor",
                "seit",
                "bei",
                "für",
                "zum",
                "zur",
                "das",
                "dies",
                "diese",
                "dieser",
                "dieses",
                "man",
                "hey",
                "liebe",
                "lieber",
                "viele",
                "alles",
                "nichts",
                "vielen",
                "herzlichen",
                "glückwunsch",
            ],
            days: [
                "montag",
                "dienstag",
                "mittwoch",
                "donnerstag",
                "freitag",
                "samstag",
                "sonntag",
            ],
            place_before: &["in", "aus", "nach", "bei", "von"],
        },
        "fr" => Lexicon {
            common: &[
                "je",
                "j'ai",
                "tu",
                "il",
                "elle",
                "on",
                "nous",
                "vous",
                "ils",
                "elles",
                "le",
                "la",
                "les",
                "l'",
                "un",
                "une",
                "des",
                "mon",
                "ma",
                "mes",
                "ton",
                "ta",
                "son",
                "sa",
                "notre",
                "votre",
                "bonjour",
                "salut",
                "merci",
                "oui",
                "non",
                "et",
                "mais",
                "ou",
                "quand",
                "si",
                "alors",
                "aussi",
                "aujourd'hui",
                "hier",
                "demain",
                "où",
                "comment",
                "quoi",
                "qui",
                "pourquoi",
                "quel",
                "quelle",
                "c'est",
                "ce",
                "cette",
                "ça",
                "super",
                "génial",
                "wow",
                "oh",
                "ah",
                "bien",
                "bravo",
                "en",
                "à",
                "au",
                "avec",
                "depuis",
                "pour",
                "dans",
                "félicitations",
            ],
            days: [
                "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche",
            ],
            place_before: &["à", "en", "de", "depuis", "vers"],
        },
        "es" => Lexicon {
            common: &[
                "yo",
                "tú",
                "él",
                "ella",
                "nosotros",
                "vosotros",
                "ellos",
                "ellas",
                "usted",
                "el",
                "la",
                "los",
                "las",
                "un",
                "una",
                "mi",
                "mis",
                "tu",
                "tus",
                "su",
                "sus",
                "nuestro",
                "nuestra",
                "hola",
                "gracias",
                "sí",
                "no",
                "y",
                "pero",
                "o",
                "cuando",
                "si",
                "entonces",
                "también",
                "hoy",
                "ayer",
                "mañana",
                "dónde",
                "cómo",
                "qué",
                "quién",
                "por",
                "porque",
                "cuál",
                "este",
                "esta",
                "eso",
                "genial",
                "vaya",
                "oh",
                "ah",
                "bien",
                "en",
                "a",
                "con",
                "desde",
                "para",
                "felicidades",
                "¡hola",
                "¿qué",
                "¿dónde",
                "¿cómo",
                "¿quién",
                "¿cuándo",
            ],
            days: [
                "lunes",
                "martes",
                "miércoles",
                "jueves",
                "viernes",
                "sábado",
                "domingo",
            ],
            place_before: &["en", "de", "desde", "a"],
        },
        "pt" => Lexicon {
            common: &[
                "eu",
                "tu",
                "você",
                "ele",
                "ela",
                "nós",
                "vocês",
                "eles",
                "elas",
                "o",
                "a",
                "os",
                "as",
                "um",
                "uma",
                "meu",
                "minha",
                "meus",
                "minhas",
                "seu",
                "sua",
                "nosso",
                "nossa",
                "olá",
                "oi",
                "obrigado",
                "obrigada",
                "sim",
                "não",
                "e",
                "mas",
                "ou",
                "quando",
                "se",
                "então",
                "também",
                "hoje",
                "ontem",
                "amanhã",
                "onde",
                "como",
                "que",
                "quem",
                "porque",
                "qual",
                "este",
                "esta",
                "isso",
                "legal",
                "ótimo",
                "uau",
                "oh",
                "ah",
                "bem",
                "em",
                "no",
                "na",
                "com",
                "desde",
                "para",
                "parabéns",
            ],
            days: [
                "segunda-feira",
                "terça-feira",
                "quarta-feira",
                "quinta-feira",
                "sexta-feira",
                "sábado",
                "domingo",
            ],
            place_before: &["em", "no", "na", "de", "do", "da", "para"],
        },
        "it" => Lexicon {
            common: &[
                "io",
                "tu",
                "lui",
                "lei",
                "noi",
                "voi",
                "loro",
                "il",
                "lo",
                "la",
                "i",
                "gli",
                "le",
                "l'",
                "un",
                "una",
                "uno",
                "mio",
                "mia",
                "miei",
                "mie",
                "tuo",
                "tua",
                "suo",
                "sua",
                "nostro",
                "nostra",
                "ciao",
                "grazie",
                "sì",
                "no",
                "e",
                "ma",
                "o",
                "quando",
                "se",
                "allora",
                "anche",
                "oggi",
                "ieri",
                "domani",
                "dove",
                "come",
                "cosa",
                "chi",
                "perché",
                "quale",
                "questo",
                "questa",
                "bello",
                "bravo",
                "wow",
                "oh",
                "ah",
                "bene",
                "in",
                "a",
                "con",
                "da",
                "per",
                "complimenti",
            ],
            days: [
                "lunedì",
                "martedì",
                "mercoledì",
                "giovedì",
                "venerdì",
                "sabato",
                "domenica",
            ],
            place_before: &["a", "in", "da", "di"],
        },
        _ => return None,
    })
}

/// German writes every noun capitalised: after an article, a determiner, a number or an
/// adjective-like lower-case word a capitalised word is a noun ("drei Jahre", "die Bäckerei"),
/// and a single one is taken for a name only after a preposition of place or "namens"/"mit"
/// ("in Lissabon", "mit Anna"), or at the start of a sentence when the tenant knows it. Two or
/// more in a row are taken ("Anna Schmidt") unless an article comes before them. Still not
/// right: a name after an adjective ("die kleine Anna"), a noun after "in" ("in Ruhe").
const DE_NAME_BEFORE: [&str; 7] = ["in", "aus", "nach", "bei", "von", "namens", "mit"];

/// Longest mention, in words and characters.
const MAX_WORDS: usize = 4;
pub const MAX_NAME_CHARS: usize = 100;

/// Trigram similarity at which a name is a known entity's misspelling.
pub const FUZZY: f64 = 0.5;

/// A name as lookups compare it: lower-case, letters, digits and single spaces, without a
/// possessive or a leading "the".
pub fn norm(name: &str) -> String {
    let lower = name.to_lowercase().replace('’', "'");
    let lower = lower
        .trim()
        .trim_end_matches("'s")
        .trim_end_matches('\'')
        .to_string();
    let cleaned: String = lower
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let words = match words.first() {
        Some(&"the") if words.len() > 1 => &words[1..],
        _ => &words[..],
    };
    words.join(" ")
}

/// pg_trgm's trigrams of a string: each word lower-cased and padded with two spaces before and
/// one after, every run of three characters.
fn trigrams(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for w in norm(s).split_whitespace() {
        let padded: Vec<char> = format!("  {w} ").chars().collect();
        for t in padded.windows(3) {
            out.insert(t.iter().collect());
        }
    }
    out
}

/// pg_trgm's `similarity(a, b)`: shared trigrams over all trigrams of either.
pub fn similarity(a: &str, b: &str) -> f64 {
    let (x, y) = (trigrams(a), trigrams(b));
    let union = x.union(&y).count();
    if union == 0 {
        return 0.0;
    }
    x.intersection(&y).count() as f64 / union as f64
}

fn is_name_word(w: &str, lex: Option<&Lexicon>, language: Option<&str>) -> bool {
    let mut chars = w.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let n = norm(w);
    let shape = first.is_uppercase()
        && w.chars().any(char::is_alphabetic)
        && w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '\'' | '’' | '-' | '.' | '&'));
    if !shape {
        return false;
    }
    match lex {
        Some(l) => {
            !l.common.contains(&n.as_str())
                && !l.days.contains(&n.as_str())
                && !crate::when::in_english(&n, language.unwrap_or(""))
                    .split(' ')
                    .any(|e| {
                        crate::when::MONTHS.contains(&e)
                            && !crate::when::MONTHS.contains(&n.as_str())
                    })
                && !crate::when::MONTHS.contains(&n.as_str())
        }
        None => {
            (!COMMON.contains(&n.as_str()) || AMBIGUOUS.contains(&n.as_str()))
                && !DAYS.contains(&n.as_str())
                && !crate::when::MONTHS.contains(&n.as_str())
        }
    }
}

/// The names `text` mentions, in order, each once (by its normalised form), read as English.
pub fn mentions(text: &str) -> Vec<Mention> {
    mentions_in(text, None)
}

/// The names `text` mentions, read in `language` (ISO 639-1): German, French, Spanish,
/// Portuguese and Italian have their own common words, days, months and prepositions of place
/// ([`Lexicon`]), German its capitalised nouns ([`DE_NAME_BEFORE`]); any other language is read
/// with the English lists (a capitalised run is a name).
pub fn mentions_in(text: &str, language: Option<&str>) -> Vec<Mention> {
    let lex = language.and_then(lexicon);
    let lex = lex.as_ref();
    let is_name_word = |w: &str| is_name_word(w, lex, language);
    let place_before: &[&str] = lex.map(|l| l.place_before).unwrap_or(&PLACE_BEFORE);
    // Words with the punctuation that ends them: a run of names stops at a comma or a stop.
    // Chinese and Japanese set no space around a name in Latin letters ("我在Door Dash工作").
    let text = crate::language::words_apart(text);
    let raw: Vec<&str> = text.split_whitespace().collect();
    let mut out: Vec<Mention> = vec![];
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut i = 0;
    while i < raw.len() {
        let word = |k: usize| raw[k].trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''));
        if !is_name_word(word(i)) {
            i += 1;
            continue;
        }
        let start = i;
        let initial = start == 0 || raw[start - 1].ends_with(['.', '!', '?', ':', '"', '“']);
        let mut words = vec![word(i)];
        // A run goes on while the word before did not end a clause.
        while i + 1 < raw.len()
            && words.len() < MAX_WORDS
            && !raw[i].ends_with([',', '.', ';', ':', '!', '?', ')'])
            && is_name_word(word(i + 1))
        {
            i += 1;
            words.push(word(i));
        }
        i += 1;
        let possessive = raw[i - 1]
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
            .ends_with(['\'', '’'])
            || raw[i - 1].to_lowercase().contains("'s")
            || raw[i - 1].to_lowercase().contains("’s");
        let name = words.join(" ");
        let name = name
            .trim_end_matches("'s")
            .trim_end_matches("’s")
            .to_string();
        let n = norm(&name);
        if n.is_empty() || name.chars().count() > MAX_NAME_CHARS || !seen.insert(n.clone()) {
            continue;
        }
        let before = (start > 0).then(|| norm(raw[start - 1]));
        let before2 = (start > 1).then(|| norm(raw[start - 2]));
        let after = raw.get(i).map(|w| norm(w));
        if language == Some("de") && !initial {
            // A noun, not a name (DE_NAME_BEFORE): one word not after a preposition of place,
            // or any run after a lower-case article or determiner.
            let prev_word = start.checked_sub(1).map(|k| raw[k]).unwrap_or("");
            let after_article = lex.is_some_and(|l| l.common.contains(&norm(prev_word).as_str()))
                && !DE_NAME_BEFORE.contains(&norm(prev_word).as_str());
            let single = words.len() == 1
                && !before
                    .as_deref()
                    .is_some_and(|b| DE_NAME_BEFORE.contains(&b));
            if single || after_article || prev_word.chars().any(char::is_numeric) {
                continue;
            }
        }
        let last = norm(words.last().copied().unwrap_or_default());
        let kind = if ORG_LAST.contains(&last.as_str()) {
            Some("organization")
        } else if last == "project"
            || before.as_deref() == Some("project")
            || after.as_deref() == Some("project")
        {
            Some("project")
        } else if possessive {
            // "visited Mel's bakery": Mel is not the place.
            None
        } else if before.as_deref().is_some_and(|b| place_before.contains(&b))
            || (before.as_deref() == Some("to")
                && before2.as_deref().is_some_and(|b| MOTION.contains(&b)))
        {
            Some("place")
        } else {
            None
        };
        let initial = initial && words.len() == 1 && AMBIGUOUS.contains(&n.as_str());
        out.push(Mention {
            name,
            kind,
            initial,
        });
    }
    out
}

/// Names the text says are one and the same: (name, alias) for "Robert, who goes by Bob",
/// "Robert (aka Bob)", "Robert, also known as Bob", "Robert, known as Bob".
pub fn aliases_in(text: &str) -> Vec<(String, String)> {
    let lower = text.to_lowercase();
    let mut out = vec![];
    for marker in [
        " also known as ",
        " known as ",
        " aka ",
        " a.k.a. ",
        " goes by ",
        " (aka ",
    ] {
        let mut from = 0;
        while let Some(p) = lower[from..].find(marker) {
            let at = from + p;
            let before = mentions(&text[..at]);
            let after = mentions(&text[at + marker.len()..]);
            if let (Some(a), Some(b)) = (before.last(), after.first()) {
                if norm(&a.name) != norm(&b.name) {
                    out.push((a.name.clone(), b.name.clone()));
                }
            }
            from = at + marker.len();
        }
    }
    out
}

/// How the user is named when a memory speaks of them ("Robert is the user's brother"): the
/// entity a relation to the user points to.
pub const THE_USER: &str = "the user";

/// Family, social and work roles a possessive names ("Sam's brother", "the user's boss"): the
/// relation is "<role> of".
const ROLES: [&str; 40] = [
    "brother",
    "sister",
    "mother",
    "father",
    "mom",
    "dad",
    "son",
    "daughter",
    "wife",
    "husband",
    "partner",
    "spouse",
    "friend",
    "boss",
    "manager",
    "colleague",
    "coworker",
    "cousin",
    "uncle",
    "aunt",
    "niece",
    "nephew",
    "grandmother",
    "grandfather",
    "grandson",
    "granddaughter",
    "girlfriend",
    "boyfriend",
    "fiancé",
    "fiancee",
    "roommate",
    "neighbor",
    "neighbour",
    "teacher",
    "mentor",
    "doctor",
    "therapist",
    "dog",
    "cat",
    "child",
];

/// Verbs that relate a name to another, as "<A> <verb> <B>": the relation recorded.
const LINKS: [(&str, &str); 11] = [
    ("works at", "works at"),
    ("works for", "works at"),
    ("is employed by", "works at"),
    ("lives in", "lives in"),
    ("moved to", "lives in"),
    ("is based in", "lives in"),
    ("is married to", "married to"),
    ("married", "married to"),
    ("is from", "from"),
    ("comes from", "from"),
    ("studies at", "studies at"),
];

/// The types a relation tells of its two sides (subject, object): a family or social role is
/// a person's, "works at" an organisation, "lives in" and "from" a place.
pub fn relation_types(relation: &str) -> (Option<&'static str>, Option<&'static str>) {
    match relation {
        "works at" | "studies at" => (Some("person"), Some("organization")),
        "lives in" | "from" => (None, Some("place")),
        "married to" => (Some("person"), Some("person")),
        r if r.ends_with(" of") && !matches!(r, "dog of" | "cat of") => (Some("person"), None),
        _ => (None, None),
    }
}

/// One word of a text as the relation rules read it: the word without the punctuation around
/// it, whether it ends a clause, and whether it is a possessive ("Sam's").
struct Word<'a> {
    raw: &'a str,
    /// As written, the punctuation around it and a possessive taken off ("Sam's," -> "Sam").
    name: &'a str,
    bare: String,
    ends_clause: bool,
    possessive: bool,
}

fn words_of(text: &str) -> Vec<Word<'_>> {
    text.split_whitespace()
        .map(|raw| {
            let t = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'));
            let lower = t.to_lowercase().replace('’', "'");
            let possessive = lower.ends_with("'s") || (lower.ends_with('\'') && lower.len() > 1);
            let bare = lower
                .trim_end_matches("'s")
                .trim_end_matches('\'')
                .to_string();
            Word {
                raw,
                name: t.trim_end_matches("'s").trim_end_matches("’s"),
                bare,
                ends_clause: raw.ends_with([',', '.', ';', ':', '!', '?', ')']),
                possessive,
            }
        })
        .collect()
}

/// The name (a run of capitalised words, at most MAX_WORDS) that ends at word `end`, included.
fn name_ending(w: &[Word], end: usize) -> Option<String> {
    let word = |k: usize| w[k].name;
    if !is_name_word(word(end), None, None) {
        return None;
    }
    let mut start = end;
    while start > 0
        && end - start + 1 < MAX_WORDS
        && !w[start - 1].ends_clause
        && is_name_word(word(start - 1), None, None)
    {
        start -= 1;
    }
    Some((start..=end).map(word).collect::<Vec<_>>().join(" "))
}

/// The name that starts at word `start` ("the" before it skipped), and the index after it.
fn name_starting(w: &[Word], mut start: usize) -> Option<(String, usize)> {
    if w.get(start).is_some_and(|x| x.bare == "the") {
        start += 1;
    }
    let word = |k: usize| w[k].name;
    if start >= w.len() || !is_name_word(word(start), None, None) {
        return None;
    }
    let mut end = start;
    while end + 1 < w.len()
        && end - start + 1 < MAX_WORDS
        && !w[end].ends_clause
        && !w[end].possessive
        && is_name_word(word(end + 1), None, None)
    {
        end += 1;
    }
    Some((
        (start..=end).map(word).collect::<Vec<_>>().join(" "),
        end + 1,
    ))
}

/// The relations between names that a text states, as (subject, relation, object): "Robert is
/// the user's brother" (Robert, "brother of", the user), "Sam's sister Ana" (Ana, "sister
/// of", Sam), "Ana works at Acme" (Ana, "works at", Acme), "Ben moved to Denver" (Ben, "lives
/// in", Denver). Only these shapes, with the names right beside the words that relate them:
/// a sentence that says more in between is left alone rather than guessed at.
pub fn relations_in(text: &str) -> Vec<(String, String, String)> {
    let w = words_of(text);
    let mut out: Vec<(String, String, String)> = vec![];
    let mut push = |a: String, rel: String, b: String| {
        if norm(&a) != norm(&b) && !out.iter().any(|x| x.0 == a && x.1 == rel && x.2 == b) {
            out.push((a, rel, b));
        }
    };
    for i in 0..w.len() {
        // "<owner>'s <role>": the owner is a name, or "the user" / "user's".
        if w[i].possessive && i + 1 < w.len() && ROLES.contains(&w[i + 1].bare.as_str()) {
            let owner = if w[i].bare == "user" {
                Some(THE_USER.to_string())
            } else {
                name_ending(&w, i)
            };
            let Some(owner) = owner else { continue };
            let owner_start = if owner == THE_USER {
                i - usize::from(i > 0 && w[i - 1].bare == "the")
            } else {
                i + 1 - owner.split_whitespace().count()
            };
            let relation = format!("{} of", w[i + 1].bare);
            // "<A> is <owner>'s <role>"
            if owner_start >= 2 && w[owner_start - 1].bare == "is" {
                if let Some(a) = name_ending(&w, owner_start - 2) {
                    push(a, relation.clone(), owner.clone());
                    continue;
                }
            }
            // "<owner>'s <role> is <A>", "<owner>'s <role>, <A>", "<owner>'s <role> <A>"
            let mut k = i + 2;
            if !w[i + 1].ends_clause || w[i + 1].raw.ends_with(',') {
                if w.get(k)
                    .is_some_and(|x| x.bare == "is" || x.bare == "named" || x.bare == "called")
                {
                    k += 1;
                }
                if let Some((a, _)) = name_starting(&w, k) {
                    push(a, relation, owner);
                }
            }
            continue;
        }
        // "<A> <verb> <B>"
        for (phrase, relation) in LINKS {
            let parts: Vec<&str> = phrase.split(' ').collect();
            let n = parts.len();
            if i + n > w.len() || i == 0 || w[i - 1].ends_clause {
                continue;
            }
            let matches = (0..n).all(|j| w[i + j].bare == parts[j])
                && (0..n - 1).all(|j| !w[i + j].ends_clause);
            if !matches {
                continue;
            }
            if let (Some(a), Some((b, _))) = (name_ending(&w, i - 1), name_starting(&w, i + n)) {
                push(a, relation.to_string(), b);
            }
        }
    }
    out
}

/// Which known entity a name is.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// `known[i]`, by its name or an alias.
    Known(usize),
    /// `known[i]` under another spelling or its first name: the name becomes an alias.
    Alias(usize),
    /// Nobody known: a new entity.
    New,
}

fn names(e: &Entity) -> impl Iterator<Item = &str> {
    std::iter::once(e.name.as_str()).chain(e.aliases.iter().map(String::as_str))
}

/// Compatible types: an unknown type (`thing`) goes with any.
fn same_kind(a: Option<&str>, b: &str) -> bool {
    match a {
        None | Some("thing") => true,
        Some(a) => b == "thing" || a == b,
    }
}

/// The resolver's rule (see the module note) for one name of type `kind` (when known).
pub fn resolve(name: &str, kind: Option<&str>, known: &[Entity]) -> Resolved {
    let n = norm(name);
    if n.is_empty() {
        return Resolved::New;
    }
    if let Some(i) = known.iter().position(|e| names(e).any(|x| norm(x) == n)) {
        return Resolved::Known(i);
    }
    // A misspelling: the closest name above the bar, same first letter, compatible type.
    let first = n.chars().next();
    let mut best: Option<(usize, f64)> = None;
    for (i, e) in known.iter().enumerate() {
        if !same_kind(kind, &e.kind) {
            continue;
        }
        for x in names(e) {
            let nx = norm(x);
            if nx.chars().next() != first || nx.split(' ').count() != n.split(' ').count() {
                continue;
            }
            let s = similarity(&n, &nx);
            if s >= FUZZY && best.is_none_or(|(_, b)| s > b) {
                best = Some((i, s));
            }
        }
    }
    if let Some((i, _)) = best {
        return Resolved::Alias(i);
    }
    // A first name alone: the one person (or unknown) whose full name starts with it.
    if !n.contains(' ') && same_kind(kind, "person") {
        let starts: Vec<usize> = known
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.kind.as_str(), "person" | "thing"))
            .filter(|(_, e)| {
                let full = norm(&e.name);
                full.contains(' ') && full.split(' ').next() == Some(n.as_str())
            })
            .map(|(i, _)| i)
            .collect();
        if let [i] = starts[..] {
            return Resolved::Alias(i);
        }
    }
    // A full name whose first name is the one person known by that first name alone.
    if let Some((first, _)) = n.split_once(' ') {
        if same_kind(kind, "person") {
            let alone: Vec<usize> = known
                .iter()
                .enumerate()
                .filter(|(_, e)| e.kind == "person")
                .filter(|(_, e)| names(e).any(|x| norm(x) == first))
                .map(|(i, _)| i)
                .collect();
            if let [i] = alone[..] {
                return Resolved::Alias(i);
            }
        }
    }
    Resolved::New
}

/// The known entities a query names, by any of their names, as whole words in any case
/// ("where does caroline work?" names Caroline).
pub fn named_in(query: &str, known: &[Entity]) -> Vec<usize> {
    let q = norm(query);
    let words: Vec<&str> = q.split(' ').filter(|w| !w.is_empty()).collect();
    known
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            names(e).any(|x| {
                let nx = norm(x);
                let parts: Vec<&str> = nx.split(' ').filter(|w| !w.is_empty()).collect();
                !parts.is_empty() && words.windows(parts.len()).any(|w| w == parts.as_slice())
            })
        })
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: &str, name: &str, kind: &str, aliases: &[&str]) -> Entity {
        Entity {
            id: id.into(),
            name: name.into(),
            kind: kind.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn mentions_are_runs_of_names_with_a_type_from_their_context() {
        let m = mentions(
            "Yesterday Caroline Smith moved to New York, then she joined Acme Corp. \
             On Monday I said Hi to Melanie's dog at the Riverside project. Wow. Will you come? \
             Nothing new. Sam runs.",
        );
        let got: Vec<(&str, Option<&str>, bool)> = m
            .iter()
            .map(|x| (x.name.as_str(), x.kind, x.initial))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Caroline Smith", None, false),
                ("New York", Some("place"), false),
                ("Acme Corp", Some("organization"), false),
                ("Melanie", None, false),
                ("Riverside", Some("project"), false),
                ("Will", None, true),
                ("Sam", None, false),
            ]
        );
        assert!(mentions("the user said hello.").is_empty());
    }

    #[test]
    fn mentions_in_other_languages() {
        let names = |t: &str, l: &str| -> Vec<(String, Option<&'static str>)> {
            mentions_in(t, Some(l))
                .into_iter()
                .filter(|m| !m.initial)
                .map(|m| (m.name, m.kind))
                .collect()
        };
        // German: nouns are capitalised too.
        assert_eq!(
            names("Ich wohnte drei Jahre lang in Lissabon, bevor ich mit Anna Schmidt nach Porto zog.", "de"),
            vec![("Lissabon".into(), Some("place")), ("Anna Schmidt".into(), None), ("Porto".into(), Some("place"))]
        );
        assert_eq!(names("Am Montag hat die Bäckerei im Mai zu.", "de"), vec![]);
        assert_eq!(
            names("Hier, j'ai vu Marie à Lyon lundi. Bonjour Paul!", "fr"),
            vec![
                ("Marie".into(), None),
                ("Lyon".into(), Some("place")),
                ("Paul".into(), None)
            ]
        );
        assert_eq!(
            names("El lunes Carmen viajó desde Sevilla. Hola a todos.", "es"),
            vec![("Carmen".into(), None), ("Sevilla".into(), Some("place"))]
        );
        assert_eq!(
            names("Ontem a Joana foi ao Porto em maio.", "pt"),
            vec![("Joana".into(), None), ("Porto".into(), None)]
        );
        assert_eq!(
            names("Ieri Giulia è andata a Roma. Ciao!", "it"),
            vec![("Giulia".into(), None), ("Roma".into(), Some("place"))]
        );
        // Chinese and Japanese write names in Latin letters without spaces around them.
        assert_eq!(
            names("对不起，Jon，但我本月在Door Dash失去了工作。", "zh"),
            vec![("Jon".into(), None), ("Door Dash".into(), None)]
        );
        assert_eq!(
            names("昨日、Mariaと東京へ行きました。", "ja"),
            vec![("Maria".into(), None)]
        );
        // Other languages are read with the English lists.
        assert_eq!(
            names("Caroline moved to Denver.", "en"),
            vec![("Caroline".into(), None), ("Denver".into(), Some("place"))]
        );
    }

    #[test]
    fn names_resolve_exactly_by_spelling_and_by_first_name() {
        let known = vec![
            e("1", "Caroline Smith", "person", &[]),
            e("2", "New York", "place", &["NYC"]),
            e("3", "Melanie", "person", &[]),
        ];
        assert_eq!(resolve("the New York", None, &known), Resolved::Known(1));
        assert_eq!(resolve("nyc", Some("place"), &known), Resolved::Known(1));
        assert_eq!(resolve("Melanie's", None, &known), Resolved::Known(2));
        assert_eq!(resolve("Mellanie", None, &known), Resolved::Alias(2));
        assert_eq!(resolve("Caroline", None, &known), Resolved::Alias(0));
        assert_eq!(resolve("Mel", None, &known), Resolved::New);
        assert_eq!(
            resolve("Melanie", Some("place"), &known),
            Resolved::Known(2)
        );
        // A misspelt place is not a person.
        assert_eq!(resolve("Mellanie", Some("place"), &known), Resolved::New);
        // Two Carolines: a first name alone is nobody in particular.
        let two = vec![
            e("1", "Caroline Smith", "person", &[]),
            e("2", "Caroline Jones", "person", &[]),
        ];
        assert_eq!(resolve("Caroline", None, &two), Resolved::New);
        // The person known by a first name alone, met under the full name.
        let alone = vec![
            e("1", "Caroline", "person", &[]),
            e("2", "Acme", "thing", &[]),
        ];
        assert_eq!(resolve("Caroline Smith", None, &alone), Resolved::Alias(0));
        assert_eq!(
            resolve("Caroline Smith", Some("place"), &alone),
            Resolved::New
        );
    }

    #[test]
    fn trigram_similarity_is_pg_trgms() {
        // SELECT similarity('caroline', 'carolyn') is 0.41666666 in pg_trgm.
        assert!((similarity("Caroline", "Carolyn") - 5.0 / 12.0).abs() < 1e-9);
        assert_eq!(similarity("abc", "abc"), 1.0);
        assert_eq!(similarity("", "x"), 0.0);
    }

    #[test]
    fn aliases_the_text_states() {
        assert_eq!(
            aliases_in("My brother Robert, who goes by Bob, called."),
            vec![("Robert".to_string(), "Bob".to_string())]
        );
        assert_eq!(
            aliases_in("We met Katherine (aka Kate) at the party."),
            vec![("Katherine".to_string(), "Kate".to_string())]
        );
    }

    #[test]
    fn queries_name_entities_in_any_case() {
        let known = vec![
            e("1", "Caroline Smith", "person", &["Caroline"]),
            e("2", "New York", "place", &[]),
        ];
        assert_eq!(named_in("where did caroline go?", &known), vec![0]);
        assert_eq!(named_in("Trips to New York?", &known), vec![1]);
        assert!(named_in("a new yorker", &known).is_empty());
    }

    #[test]
    fn relations_are_read_only_where_a_sentence_states_them() {
        let r = |t: &str| relations_in(t);
        let rel = |a: &str, x: &str, b: &str| (a.to_string(), x.to_string(), b.to_string());
        assert_eq!(
            r("Robert is the user's brother."),
            vec![rel("Robert", "brother of", "the user")]
        );
        assert_eq!(
            r("Robert is Sam's brother."),
            vec![rel("Robert", "brother of", "Sam")]
        );
        assert_eq!(
            r("Sam's sister Ana is a nurse."),
            vec![rel("Ana", "sister of", "Sam")]
        );
        assert_eq!(
            r("The user's boss is Maria Lopez."),
            vec![rel("Maria Lopez", "boss of", "the user")]
        );
        assert_eq!(
            r("Ana works at Acme Corp."),
            vec![rel("Ana", "works at", "Acme Corp")]
        );
        assert_eq!(
            r("Ben moved to Denver in May."),
            vec![rel("Ben", "lives in", "Denver")]
        );
        assert_eq!(
            r("Ana is married to Tom."),
            vec![rel("Ana", "married to", "Tom")]
        );
        // Something in between, or no name on one side: nothing is guessed.
        assert!(r("Ana often works at home.").is_empty());
        assert!(r("Ana said that she works at Acme.").is_empty());
        assert!(r("Sam's brother is tall.").is_empty());
        assert!(r("The user works at Acme.").is_empty());
        assert!(r("Sam's favourite book is Dune.").is_empty());
    }
}
