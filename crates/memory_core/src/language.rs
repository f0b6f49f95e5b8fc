//! Languages (docs/api.md "Languages"): which language a text is written in, and how its words
//! become the lexemes keyword search matches.
//!
//! Every memory, message and memory file records a language, an ISO 639-1 code: the caller's
//! (`"language"` in a write request), else the one detected here when detection is sure, else
//! the tenant's default (`memory_configure('{"language": ...}')`), else none. Keyword search
//! stems a text with its language's Snowball configuration (`ts_config`), `simple` for a
//! language Postgres has none for, and English for a text of no known language (what every text
//! got before 0.13.0, so rows written before keep their lexemes). The same rule reads a query,
//! in its own language (sql/schema.sql `memory.text_tsvector`, src/pg/fulltext.rs).
//!
//! Two things the configurations cannot do are done before them (`prepare`):
//! - Scripts written without spaces between words (Chinese, Japanese, Thai, …) have no words
//!   for Postgres' parser to find: a whole sentence would be one token. Each run of such
//!   characters becomes its overlapping character bigrams ("我住在里斯本" → "我住 住在 在里 里斯
//!   斯本"), as Lucene's CJK analyzer does: a query's bigrams then match inside the text without
//!   a dictionary, for any of these languages (a word segmenter needs one per language, tens of
//!   megabytes each). The run's single characters follow its bigrams (Lucene's
//!   `outputUnigrams`): a word of one character (猫, 車, 书) asked alone is a unigram, which
//!   bigrams alone never matched; on the translated LoCoMo conversation BM25 alone rose from
//!   0.569 to 0.617 in Chinese and from 0.480 to 0.552 in Japanese (turn recall@5), at the cost
//!   of about twice the lexemes for such texts. BM25's idf weighs the common characters down.
//! - Accents are folded (`café` = `cafe`) for the languages whose writers often leave them out
//!   and where an accent rarely tells two words apart: French, Spanish, Portuguese, Italian,
//!   Catalan. Not for German (`schon` ≠ `schön`) or the others.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;

/// ISO 639-1 codes with a Snowball configuration in every supported PostgreSQL (15, 17, 18):
/// the language's code and the configuration's name. Kept equal to `memory.ts_config` in
/// sql/schema.sql (a test compares them).
pub const CONFIGS: [(&str, &str); 29] = [
    ("ar", "arabic"),
    ("ca", "catalan"),
    ("da", "danish"),
    ("de", "german"),
    ("el", "greek"),
    ("en", "english"),
    ("es", "spanish"),
    ("eu", "basque"),
    ("fi", "finnish"),
    ("fr", "french"),
    ("ga", "irish"),
    ("hi", "hindi"),
    ("hu", "hungarian"),
    ("hy", "armenian"),
    ("id", "indonesian"),
    ("it", "italian"),
    ("lt", "lithuanian"),
    ("nb", "norwegian"),
    ("ne", "nepali"),
    ("nl", "dutch"),
    ("nn", "norwegian"),
    ("no", "norwegian"),
    ("pt", "portuguese"),
    ("ro", "romanian"),
    ("ru", "russian"),
    ("sr", "serbian"),
    ("sv", "swedish"),
    ("ta", "tamil"),
    ("tr", "turkish"),
];

/// Languages whose accents are folded before stemming (the module's doc says why these).
pub const FOLDED: [&str; 5] = ["ca", "es", "fr", "it", "pt"];

/// The text search configuration for a language: its Snowball configuration, `simple` for a
/// language without one, `english` for no language.
pub fn ts_config(language: Option<&str>) -> &'static str {
    match language {
        None => "english",
        Some(l) => CONFIGS
            .iter()
            .find(|(c, _)| *c == l)
            .map(|(_, n)| *n)
            .unwrap_or("simple"),
    }
}

/// A language as a caller gives it: an ISO 639-1 code, in any case, or a BCP 47 tag whose first
/// part is one (`pt-BR` → `pt`, `zh_Hant` → `zh`). `Err` says what is wrong.
pub fn code(given: &str) -> Result<String, String> {
    let t = given.trim();
    let primary = t.split(['-', '_']).next().unwrap_or("");
    if primary.len() == 2 && primary.chars().all(|c| c.is_ascii_alphabetic()) {
        Ok(primary.to_ascii_lowercase())
    } else {
        Err(format!(
            "{given:?} is not an ISO 639-1 language code (two letters, such as \"de\" or \"pt-BR\")"
        ))
    }
}

/// How much of a text detection reads: enough for any language, and a 100 kB file costs no more
/// than its first page.
const DETECT_CHARS: usize = 2000;

/// The language `text` is written in, when detection is sure of it (whatlang's confidence, or a
/// script only one language writes); `None` for short or mixed texts, which take the tenant's
/// default instead.
pub fn detect(text: &str) -> Option<&'static str> {
    let head: Cow<str> = match text.char_indices().nth(DETECT_CHARS) {
        Some((i, _)) => Cow::Borrowed(&text[..i]),
        None => Cow::Borrowed(text),
    };
    let info = whatlang::detect(&head)?;
    // A script one language writes decides alone, however short the text ("東京" is not
    // reliable to whatlang by length, but only Chinese and Japanese write Han, and Japanese
    // writes kana beside it).
    let by_script = match info.script() {
        whatlang::Script::Hiragana | whatlang::Script::Katakana => Some("ja"),
        whatlang::Script::Hangul => Some("ko"),
        whatlang::Script::Thai => Some("th"),
        whatlang::Script::Greek => Some("el"),
        whatlang::Script::Georgian => Some("ka"),
        whatlang::Script::Armenian => Some("hy"),
        whatlang::Script::Mandarin => Some(if has_kana(&head) { "ja" } else { "zh" }),
        _ => None,
    };
    if by_script.is_some() {
        return by_script;
    }
    // whatlang's own test ("reliable") leaves out a third of ordinary German sentences; a
    // confidence of 0.5 takes 81 of 108 German turns (0 wrong) and 2,190 of 2,760 English ones
    // (12 wrong), measured on LoCoMo turns and their translations (docs/retrieval.md
    // "Languages"). What it leaves out takes the tenant's default.
    if info.is_reliable() || info.confidence() >= 0.5 {
        return iso639_1(info.lang());
    }
    // whatlang is unsure of most short texts in the scripts several languages write ("Я живу в
    // Лиссабоне уже два года и работаю учителем." read as Bulgarian, 0.34; one Arabic word): the
    // script's most written language takes them (Ukrainian has letters of its own). A Latin
    // text has no such majority (English turns read as Afrikaans or French): the tenant's
    // default decides.
    match info.script() {
        whatlang::Script::Cyrillic => Some(if head.chars().any(|c| "іїєґІЇЄҐ".contains(c)) {
            "uk"
        } else {
            "ru"
        }),
        whatlang::Script::Arabic => Some("ar"),
        whatlang::Script::Hebrew => Some("he"),
        whatlang::Script::Devanagari => Some("hi"),
        _ => None,
    }
}

fn has_kana(s: &str) -> bool {
    s.chars()
        .any(|c| matches!(c as u32, 0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9D))
}

/// whatlang's languages (ISO 639-3) that have an ISO 639-1 code.
fn iso639_1(l: whatlang::Lang) -> Option<&'static str> {
    use whatlang::Lang::*;
    Some(match l {
        Afr => "af",
        Aka => "ak",
        Amh => "am",
        Ara => "ar",
        Aze => "az",
        Bel => "be",
        Ben => "bn",
        Bul => "bg",
        Cat => "ca",
        Ces => "cs",
        Cmn => "zh",
        Dan => "da",
        Deu => "de",
        Ell => "el",
        Eng => "en",
        Epo => "eo",
        Est => "et",
        Fin => "fi",
        Fra => "fr",
        Guj => "gu",
        Heb => "he",
        Hin => "hi",
        Hrv => "hr",
        Hun => "hu",
        Hye => "hy",
        Ind => "id",
        Ita => "it",
        Jav => "jv",
        Jpn => "ja",
        Kan => "kn",
        Kat => "ka",
        Khm => "km",
        Kor => "ko",
        Lat => "la",
        Lav => "lv",
        Lit => "lt",
        Mal => "ml",
        Mar => "mr",
        Mkd => "mk",
        Mya => "my",
        Nep => "ne",
        Nld => "nl",
        Nob => "nb",
        Ori => "or",
        Pan => "pa",
        Pes => "fa",
        Pol => "pl",
        Por => "pt",
        Ron => "ro",
        Rus => "ru",
        Sin => "si",
        Slk => "sk",
        Slv => "sl",
        Sna => "sn",
        Spa => "es",
        Srp => "sr",
        Swe => "sv",
        Tam => "ta",
        Tel => "te",
        Tgl => "tl",
        Tha => "th",
        Tuk => "tk",
        Tur => "tr",
        Ukr => "uk",
        Urd => "ur",
        Uzb => "uz",
        Vie => "vi",
        Yid => "yi",
        Zul => "zu",
        _ => return None,
    })
}

/// Characters of scripts written without spaces between words: Han (with its extensions and
/// compatibility forms), Hiragana, Katakana (half-width too), Hangul syllables (Korean puts
/// spaces between phrases, not before particles: "서울에서" holds "서울"), Thai, Lao, Khmer,
/// Myanmar.
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF            // Thai, Lao
        | 0x1000..=0x109F          // Myanmar
        | 0x1780..=0x17FF          // Khmer
        | 0x3040..=0x30FF          // Hiragana, Katakana
        | 0x31F0..=0x31FF          // Katakana phonetic extensions
        | 0x3400..=0x4DBF          // Han extension A
        | 0x4E00..=0x9FFF          // Han
        | 0xAC00..=0xD7AF          // Hangul syllables
        | 0xF900..=0xFAFF          // Han compatibility
        | 0xFF66..=0xFF9D          // half-width Katakana
        | 0x20000..=0x3134F) // Han extensions B-G
}

/// `text` with its words set apart where an unspaced script does not set them apart, for the
/// rules that read words split at spaces and punctuation (names, actors): a space where a run
/// of an unspaced script meets other letters or digits ("Jon去年" → "Jon 去年": Han and Latin
/// letters are both alphanumeric, so "Jon" was no word of its own), and the full-width
/// punctuation of those scripts as its ASCII form and a space ("，" → ", "), so that a clause
/// ends where it ends. Borrowed when there is nothing to set apart (most texts).
pub fn words_apart(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| unspaced(c) || ascii_punctuation(c).is_some())
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    // 0: neither, 1: an unspaced script, 2: other letters or digits.
    let mut prev = 0u8;
    for c in text.chars() {
        if let Some(a) = ascii_punctuation(c) {
            out.push(a);
            out.push(' ');
            prev = 0;
            continue;
        }
        let class = if unspaced(c) {
            1
        } else if c.is_alphanumeric() {
            2
        } else {
            0
        };
        if prev != 0 && class != 0 && prev != class {
            out.push(' ');
        }
        out.push(c);
        prev = class;
    }
    Cow::Owned(out)
}

/// The ASCII form of the full-width and ideographic punctuation that ends a clause or a
/// sentence in Chinese and Japanese text.
fn ascii_punctuation(c: char) -> Option<char> {
    Some(match c {
        '，' | '、' | '､' => ',',
        '。' | '．' | '｡' => '.',
        '！' => '!',
        '？' => '?',
        '；' => ';',
        '：' => ':',
        '（' => '(',
        '）' => ')',
        // Not “ ”: English writes them too, and Chinese's are the same characters, which are
        // no letters and so end a word already.
        '「' | '」' | '『' | '』' => '"',
        _ => return None,
    })
}

/// `text` as keyword search reads it in `language`: runs of unspaced scripts as bigrams, accents
/// folded for the languages in [`FOLDED`]. Borrowed when nothing changes (most texts).
pub fn prepare<'a>(language: Option<&str>, text: &'a str) -> Cow<'a, str> {
    let fold = language.is_some_and(|l| FOLDED.contains(&l));
    let text: Cow<str> = if fold && !text.is_ascii() {
        // NFD, then without the combining marks: é -> e, ç -> c, ã -> a.
        Cow::Owned(
            text.nfd()
                .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    };
    if !text.chars().any(unspaced) {
        return text;
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = vec![];
    let flush = |run: &mut Vec<char>, out: &mut String| {
        match run.len() {
            0 => {}
            1 => {
                out.push(' ');
                out.push(run[0]);
                out.push(' ');
            }
            _ => {
                for w in run.windows(2) {
                    out.push(' ');
                    out.push(w[0]);
                    out.push(w[1]);
                }
                for c in run.iter() {
                    out.push(' ');
                    out.push(*c);
                }
                out.push(' ');
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if unspaced(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_are_postgres_own_and_match_the_sql() {
        assert_eq!(ts_config(Some("de")), "german");
        assert_eq!(ts_config(Some("pt")), "portuguese");
        assert_eq!(ts_config(Some("ja")), "simple");
        assert_eq!(ts_config(None), "english");
        // memory.ts_config in sql/schema.sql lists the same pairs.
        let sql = include_str!("../../../sql/schema.sql");
        for (code, name) in CONFIGS {
            assert!(
                sql.contains(&format!(
                    "WHEN language = '{code}' THEN '{name}'::regconfig"
                )),
                "sql/schema.sql memory.ts_config lacks {code} -> {name}"
            );
        }
        let start = sql.find("CREATE FUNCTION memory.ts_config").unwrap();
        let body = &sql[start..][..sql[start..].find("END;").unwrap()];
        let listed = body.matches("'::regconfig").count();
        // The pairs, 'simple' and 'english' for no language.
        assert_eq!(
            listed,
            CONFIGS.len() + 2,
            "memory.ts_config lists other pairs"
        );
    }

    #[test]
    fn codes_are_iso_639_1_or_a_tag_that_starts_with_one() {
        assert_eq!(code("de").unwrap(), "de");
        assert_eq!(code(" PT-br ").unwrap(), "pt");
        assert_eq!(code("zh_Hant").unwrap(), "zh");
        for bad in ["", "deu", "german", "d", "1a", "de;drop"] {
            assert!(code(bad).is_err(), "{bad:?} was taken");
        }
    }

    #[test]
    fn detects_what_it_is_sure_of() {
        assert_eq!(
            detect("Ich wohne seit zwei Jahren in Lissabon und arbeite als Lehrerin."),
            Some("de")
        );
        assert_eq!(
            detect("Je travaille à Lyon depuis trois ans, dans une petite librairie."),
            Some("fr")
        );
        assert_eq!(
            detect("Я живу в Лиссабоне уже два года и работаю учителем."),
            Some("ru")
        );
        assert_eq!(detect("我住在里斯本，在一所学校当老师。"), Some("zh"));
        assert_eq!(detect("私はリスボンに住んでいます。"), Some("ja"));
        // Kanji alone, written by a Japanese writer beside kana elsewhere: Han says Chinese.
        assert_eq!(detect("東京"), Some("zh"));
        assert_eq!(detect("서울에서 일하고 있어요"), Some("ko"));
        assert_eq!(
            detect("I have lived in Lisbon for two years and I work as a teacher there."),
            Some("en")
        );
        // Too short to tell.
        assert_eq!(detect("ok"), None);
        assert_eq!(detect(""), None);
        assert_eq!(detect("12345 !!"), None);
    }

    #[test]
    fn words_set_apart_where_scripts_meet() {
        assert_eq!(words_apart("Jon去年失去了工作。"), "Jon 去年失去了工作. ");
        assert_eq!(
            words_apart("对不起，Jon，但我在Door Dash失去了工作"),
            "对不起, Jon, 但我在 Door Dash 失去了工作"
        );
        assert_eq!(words_apart("ジョンはJonと東京に"), "ジョンは Jon と東京に");
        assert!(matches!(words_apart("Jon, in Lisbon."), Cow::Borrowed(_)));
        // English text with curly quotes reads as before.
        assert!(matches!(words_apart("“Anna,” said Jon."), Cow::Borrowed(_)));
    }

    #[test]
    fn unspaced_scripts_become_bigrams_and_characters() {
        assert_eq!(
            prepare(None, "我住在里斯本"),
            " 我住 住在 在里 里斯 斯本 我 住 在 里 斯 本 "
        );
        assert_eq!(
            prepare(Some("ja"), "東京に住む、Tom"),
            " 東京 京に に住 住む 東 京 に 住 む 、Tom"
        );
        // A word of one character, asked alone, is in the texts that hold it.
        assert_eq!(prepare(None, "猫"), " 猫 ");
        assert!(prepare(None, "我养了一只猫").contains(" 猫 "));
        // Untouched when there is nothing to do: no copy.
        assert!(matches!(
            prepare(Some("en"), "plain text"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(prepare(Some("de"), "schön"), Cow::Borrowed(_)));
    }

    #[test]
    fn accents_fold_where_the_language_wants_it() {
        assert_eq!(prepare(Some("fr"), "Café à Noël"), "Cafe a Noel");
        assert_eq!(prepare(Some("pt"), "informação"), "informacao");
        assert_eq!(prepare(Some("de"), "schön"), "schön");
        assert_eq!(prepare(None, "café"), "café");
    }
}
