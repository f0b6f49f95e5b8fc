//! The two C functions keyword search reads texts through (sql/schema.sql declares them, before
//! the tables whose generated columns call them): `memory.text_prepare(language, body)` and
//! `memory.detect_language(body)`. The rules are memory_core::language's.

use memory_core::language;
use pgrx::prelude::*;

/// `memory.text_prepare(language text, body text) RETURNS text` (IMMUTABLE, not STRICT: a NULL
/// language is "unknown"): unspaced scripts as bigrams, accents folded where the language wants
/// it. NULL body, NULL answer.
#[pg_extern(sql = false)]
fn text_prepare(language: Option<&str>, body: Option<&str>) -> Option<String> {
    body.map(|b| language::prepare(language, b).into_owned())
}

/// `memory.detect_language(body text) RETURNS text` (IMMUTABLE STRICT): the ISO 639-1 code of
/// the language `body` is written in, NULL when detection is not sure.
#[pg_extern(sql = false)]
fn detect_language(body: &str) -> Option<&'static str> {
    language::detect(body)
}
