//! The time a query names ("last May", "in 2022", "yesterday", "3 weeks ago", "8 May 2023"),
//! as a window of event time that memory_query prefers (rank.rs, `time`). Relative phrases are
//! read against a reference time: the request's `reference_time`, or now.
//!
//! Only phrases that name a time say anything: "when did Sam move?" names none, and a
//! window is returned only when the query names exactly one.
//!
//! German, French, Spanish, Portuguese and Italian queries (`window_in`) are read by the same
//! rules after their time words are put in English words and order (`in_english`): "letzte
//! Woche", "la semaine dernière", "la semana pasada", "semana passada", "la settimana scorsa"
//! are "last week"; "vor 3 Wochen", "il y a 3 semaines", "hace 3 semanas", "há 3 semanas",
//! "3 settimane fa" are "3 weeks ago"; month names, days, seasons, numbers up to twelve.

use chrono::{DateTime, Datelike, NaiveDate, Utc};

/// [start, end) in days since the Unix epoch (fractions allowed).
pub type Window = (f64, f64);

/// A point in time (a query's reference time).
pub type Time = DateTime<Utc>;

/// The months' names, lower-case (crate::entities leaves them out of names too).
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn day(d: NaiveDate) -> f64 {
    (d - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as f64
}

/// Days since the Unix epoch of a time.
pub fn epoch_days(t: DateTime<Utc>) -> f64 {
    t.timestamp() as f64 / 86_400.0
}

fn month_window(year: i32, month: u32) -> Option<Window> {
    let start = NaiveDate::from_ymd_opt(year, month, 1)?;
    let end = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)?
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)?
    };
    Some((day(start), day(end)))
}

fn year_window(year: i32) -> Option<Window> {
    Some((
        day(NaiveDate::from_ymd_opt(year, 1, 1)?),
        day(NaiveDate::from_ymd_opt(year + 1, 1, 1)?),
    ))
}

fn month_of(w: &str) -> Option<u32> {
    let w = w.trim_end_matches('.');
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| {
            *m == w || (w.len() == 3 && m.starts_with(w)) || (w == "sept" && *m == "september")
        })
        .map(|i| i as u32 + 1)
}

fn year_of(w: &str) -> Option<i32> {
    let y: i32 = w.trim_end_matches("'s").parse().ok()?;
    (w.len() == 4 && (1900..=2199).contains(&y)).then_some(y)
}

fn number(w: &str) -> Option<i64> {
    let small = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    if let Some(i) = small.iter().position(|x| *x == w) {
        return Some(i as i64 + 1);
    }
    match w {
        "a" | "an" => Some(1),
        "a couple" | "couple" => Some(2),
        "few" => Some(3),
        _ => w.parse().ok().filter(|n| (1..=400).contains(n)),
    }
}

/// The window the query names, read against `reference`; `None` when it names no time, or
/// more than one.
pub fn window(query: &str, reference: DateTime<Utc>) -> Option<Window> {
    let q = query.to_lowercase();
    let words: Vec<&str> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let today = reference.date_naive();
    let t = day(today);
    let mut found: Vec<Window> = vec![];
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let next = words.get(i + 1).copied().unwrap_or("");
        let next2 = words.get(i + 2).copied().unwrap_or("");
        let prev = if i > 0 { words[i - 1] } else { "" };
        let mut step = 1;
        let hit: Option<Window> = match w {
            "today" | "tonight" => Some((t, t + 1.0)),
            "yesterday" => Some((t - 1.0, t)),
            "last" | "this" | "past" | "previous" => {
                let back = if w == "this" { 0 } else { 1 };
                step = 2;
                match next.trim_end_matches("'s") {
                    "night" if w == "last" => Some((t - 1.0, t + 1.0)),
                    "week" | "weekend" => {
                        let monday = t - f64::from(today.weekday().num_days_from_monday());
                        Some((
                            monday - 7.0 * f64::from(back),
                            monday + 7.0 - 7.0 * f64::from(back),
                        ))
                    }
                    "month" => {
                        let (mut y, mut m) = (today.year(), today.month());
                        if back == 1 {
                            (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
                        }
                        month_window(y, m)
                    }
                    "year" => year_window(today.year() - back),
                    "spring" | "summer" | "autumn" | "fall" | "winter" => {
                        let (from, len) = match next {
                            "spring" => (3, 3),
                            "summer" => (6, 3),
                            "autumn" | "fall" => (9, 3),
                            _ => (12, 3),
                        };
                        // The latest such season that has begun (this) or ended (last).
                        let mut y = today.year();
                        let started =
                            |y: i32| month_window(y, from).map(|m| m.0).unwrap_or(f64::MAX);
                        let length = |y: i32| {
                            let end = if from + len > 12 {
                                month_window(y + 1, from + len - 12).map(|m| m.0)
                            } else {
                                month_window(y, from + len).map(|m| m.0)
                            };
                            end.unwrap_or(f64::MAX)
                        };
                        // At most two years back (a season that has not begun or ended this
                        // year did last year); bounded whatever the reference.
                        for _ in 0..2 {
                            if started(y) > t || (back == 1 && length(y) > t) {
                                y -= 1;
                            }
                        }
                        Some((started(y), length(y)))
                    }
                    m => month_of(m).and_then(|m| {
                        // "last May": the latest May before this month; "this May": this year's.
                        let y = if back == 1 && m >= today.month() {
                            today.year() - 1
                        } else {
                            today.year()
                        };
                        month_window(y, m)
                    }),
                }
            }
            _ if number(w).is_some() && matches!(next2, "ago" | "before" | "earlier") => {
                let n = number(w).unwrap_or(1);
                step = 3;
                let unit = next.trim_end_matches('s');
                match unit {
                    "day" => Some((t - n as f64, t - n as f64 + 1.0)),
                    "week" => Some((t - 7.0 * n as f64 - 3.0, t - 7.0 * n as f64 + 4.0)),
                    "month" => Some((t - 30.4 * n as f64 - 15.0, t - 30.4 * n as f64 + 15.0)),
                    "year" => year_window(today.year() - n as i32),
                    _ => None,
                }
            }
            _ => {
                if let Some(m) = month_of(w).filter(|_| w != "may" || prev_allows_may(prev, next)) {
                    // "May 2023", "8 May 2023", "May 8, 2023", "May 8", "in May".
                    let day_before = prev.parse::<u32>().ok().filter(|d| (1..=31).contains(d));
                    let day_after = next
                        .trim_end_matches(&['s', 't', 'h', 'n', 'd', 'r'][..])
                        .parse::<u32>()
                        .ok()
                        .filter(|d| (1..=31).contains(d));
                    let year = year_of(next).or_else(|| year_of(next2));
                    step = 1 + match (day_after, year_of(next)) {
                        (Some(_), _) => 1 + usize::from(year_of(next2).is_some()),
                        (None, Some(_)) => 1,
                        (None, None) => 0,
                    };
                    let y = year.unwrap_or(if m <= today.month() {
                        today.year()
                    } else {
                        today.year() - 1
                    });
                    match day_before.or(day_after) {
                        Some(d) => NaiveDate::from_ymd_opt(y, m, d).map(|d| (day(d), day(d) + 1.0)),
                        None => month_window(y, m),
                    }
                } else if let Some(y) = year_of(w) {
                    // A year alone ("in 2022"); one right after a month was read with it.
                    if month_of(prev).is_some() {
                        None
                    } else {
                        year_window(y)
                    }
                } else {
                    iso_date(w).map(|d| (day(d), day(d) + 1.0))
                }
            }
        };
        if let Some(h) = hit {
            if !found.contains(&h) {
                found.push(h);
            }
        }
        i += step;
    }
    (found.len() == 1).then(|| found[0])
}

/// The time `query` names, read in `language` (ISO 639-1; English rules for any other).
pub fn window_in(query: &str, reference: DateTime<Utc>, language: Option<&str>) -> Option<Window> {
    match language {
        Some(l @ ("de" | "fr" | "es" | "pt" | "it")) => window(&in_english(query, l), reference),
        _ => window(query, reference),
    }
}

/// The English word for a time word of `language` (lower case), if it is one.
fn time_word(language: &str, w: &str) -> Option<&'static str> {
    const MONTHS_OF: [(&str, [&str; 12]); 5] = [
        (
            "de",
            [
                "januar",
                "februar",
                "märz",
                "april",
                "mai",
                "juni",
                "juli",
                "august",
                "september",
                "oktober",
                "november",
                "dezember",
            ],
        ),
        (
            "fr",
            [
                "janvier",
                "février",
                "mars",
                "avril",
                "mai",
                "juin",
                "juillet",
                "août",
                "septembre",
                "octobre",
                "novembre",
                "décembre",
            ],
        ),
        (
            "es",
            [
                "enero",
                "febrero",
                "marzo",
                "abril",
                "mayo",
                "junio",
                "julio",
                "agosto",
                "septiembre",
                "octubre",
                "noviembre",
                "diciembre",
            ],
        ),
        (
            "pt",
            [
                "janeiro",
                "fevereiro",
                "março",
                "abril",
                "maio",
                "junho",
                "julho",
                "agosto",
                "setembro",
                "outubro",
                "novembro",
                "dezembro",
            ],
        ),
        (
            "it",
            [
                "gennaio",
                "febbraio",
                "marzo",
                "aprile",
                "maggio",
                "giugno",
                "luglio",
                "agosto",
                "settembre",
                "ottobre",
                "novembre",
                "dicembre",
            ],
        ),
    ];
    if let Some((_, names)) = MONTHS_OF.iter().find(|(l, _)| *l == language) {
        if let Some(i) = names.iter().position(|m| *m == w) {
            return Some(MONTHS[i]);
        }
    }
    let table: &[(&str, &str)] = match language {
        "de" => &[
            ("heute", "today"),
            ("gestern", "yesterday"),
            ("letzte", "last"),
            ("letzten", "last"),
            ("letzter", "last"),
            ("letztes", "last"),
            ("vorige", "last"),
            ("vorigen", "last"),
            ("voriges", "last"),
            ("vergangene", "last"),
            ("vergangenen", "last"),
            ("diese", "this"),
            ("diesen", "this"),
            ("dieses", "this"),
            ("dieser", "this"),
            ("woche", "week"),
            ("wochen", "weeks"),
            ("wochenende", "weekend"),
            ("monat", "month"),
            ("monate", "months"),
            ("monaten", "months"),
            ("jahr", "year"),
            ("jahre", "years"),
            ("jahren", "years"),
            ("tag", "day"),
            ("tage", "days"),
            ("tagen", "days"),
            ("frühling", "spring"),
            ("sommer", "summer"),
            ("herbst", "autumn"),
            ("winter", "winter"),
            ("ein", "a"),
            ("einem", "a"),
            ("einer", "a"),
            ("eine", "a"),
            ("zwei", "two"),
            ("drei", "three"),
            ("vier", "four"),
            ("fünf", "five"),
            ("sechs", "six"),
            ("sieben", "seven"),
            ("acht", "eight"),
            ("neun", "nine"),
            ("zehn", "ten"),
            ("elf", "eleven"),
            ("zwölf", "twelve"),
            ("im", "in"),
            ("seit", "since"),
        ],
        "fr" => &[
            ("aujourd'hui", "today"),
            ("hier", "yesterday"),
            ("dernier", "last"),
            ("dernière", "last"),
            ("derniers", "last"),
            ("passé", "last"),
            ("passée", "last"),
            ("ce", "this"),
            ("cet", "this"),
            ("cette", "this"),
            ("semaine", "week"),
            ("semaines", "weeks"),
            ("mois", "month"),
            ("an", "year"),
            ("ans", "years"),
            ("année", "year"),
            ("années", "years"),
            ("jour", "day"),
            ("jours", "days"),
            ("printemps", "spring"),
            ("été", "summer"),
            ("automne", "autumn"),
            ("hiver", "winter"),
            ("un", "a"),
            ("une", "a"),
            ("deux", "two"),
            ("trois", "three"),
            ("quatre", "four"),
            ("cinq", "five"),
            ("six", "six"),
            ("sept", "seven"),
            ("huit", "eight"),
            ("neuf", "nine"),
            ("dix", "ten"),
            ("onze", "eleven"),
            ("douze", "twelve"),
            ("en", "in"),
            ("depuis", "since"),
        ],
        "es" => &[
            ("hoy", "today"),
            ("ayer", "yesterday"),
            ("pasado", "last"),
            ("pasada", "last"),
            ("último", "last"),
            ("última", "last"),
            ("este", "this"),
            ("esta", "this"),
            ("semana", "week"),
            ("semanas", "weeks"),
            ("mes", "month"),
            ("meses", "months"),
            ("año", "year"),
            ("años", "years"),
            ("día", "day"),
            ("días", "days"),
            ("primavera", "spring"),
            ("verano", "summer"),
            ("otoño", "autumn"),
            ("invierno", "winter"),
            ("un", "a"),
            ("una", "a"),
            ("dos", "two"),
            ("tres", "three"),
            ("cuatro", "four"),
            ("cinco", "five"),
            ("seis", "six"),
            ("siete", "seven"),
            ("ocho", "eight"),
            ("nueve", "nine"),
            ("diez", "ten"),
            ("once", "eleven"),
            ("doce", "twelve"),
            ("en", "in"),
            ("desde", "since"),
        ],
        "pt" => &[
            ("hoje", "today"),
            ("ontem", "yesterday"),
            ("passado", "last"),
            ("passada", "last"),
            ("último", "last"),
            ("última", "last"),
            ("este", "this"),
            ("esta", "this"),
            ("neste", "this"),
            ("nesta", "this"),
            ("semana", "week"),
            ("semanas", "weeks"),
            ("mês", "month"),
            ("meses", "months"),
            ("ano", "year"),
            ("anos", "years"),
            ("dia", "day"),
            ("dias", "days"),
            ("primavera", "spring"),
            ("verão", "summer"),
            ("outono", "autumn"),
            ("inverno", "winter"),
            ("um", "a"),
            ("uma", "a"),
            ("dois", "two"),
            ("duas", "two"),
            ("três", "three"),
            ("quatro", "four"),
            ("cinco", "five"),
            ("seis", "six"),
            ("sete", "seven"),
            ("oito", "eight"),
            ("nove", "nine"),
            ("dez", "ten"),
            ("onze", "eleven"),
            ("doze", "twelve"),
            ("em", "in"),
            ("desde", "since"),
        ],
        "it" => &[
            ("oggi", "today"),
            ("ieri", "yesterday"),
            ("scorso", "last"),
            ("scorsa", "last"),
            ("passato", "last"),
            ("passata", "last"),
            ("questo", "this"),
            ("questa", "this"),
            ("settimana", "week"),
            ("settimane", "weeks"),
            ("mese", "month"),
            ("mesi", "months"),
            ("anno", "year"),
            ("anni", "years"),
            ("giorno", "day"),
            ("giorni", "days"),
            ("primavera", "spring"),
            ("estate", "summer"),
            ("autunno", "autumn"),
            ("inverno", "winter"),
            ("un", "a"),
            ("una", "a"),
            ("due", "two"),
            ("tre", "three"),
            ("quattro", "four"),
            ("cinque", "five"),
            ("sei", "six"),
            ("sette", "seven"),
            ("otto", "eight"),
            ("nove", "nine"),
            ("dieci", "ten"),
            ("undici", "eleven"),
            ("dodici", "twelve"),
            ("fa", "ago"),
            ("nel", "in"),
            ("a", "in"),
            ("dal", "since"),
        ],
        _ => &[],
    };
    table.iter().find(|(k, _)| *k == w).map(|(_, v)| *v)
}

/// `query`'s time words in English words and order (see the module note); other words as they
/// are, lower case.
pub fn in_english(query: &str, language: &str) -> String {
    let q = query.to_lowercase();
    let words: Vec<&str> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    let unit = |w: &str| {
        matches!(
            w,
            "day"
                | "days"
                | "week"
                | "weeks"
                | "weekend"
                | "month"
                | "months"
                | "year"
                | "years"
                | "spring"
                | "summer"
                | "autumn"
                | "winter"
        ) || MONTHS.contains(&w)
    };
    let en = |w: &str| {
        time_word(language, w)
            .map(str::to_string)
            .unwrap_or_else(|| w.to_string())
    };
    while i < words.len() {
        let w = words[i];
        // "vor 3 Wochen", "hace 3 semanas", "há 3 semanas", "il y a 3 semaines": N units ago.
        let lead = match (language, w) {
            ("de", "vor") | ("es", "hace") | ("pt", "há") | ("pt", "ha") => Some(1),
            ("fr", "il") if words.get(i + 1) == Some(&"y") && words.get(i + 2) == Some(&"a") => {
                Some(3)
            }
            _ => None,
        };
        if let Some(skip) = lead {
            let (n, u) = (
                words.get(i + skip).map(|w| en(w)),
                words.get(i + skip + 1).map(|w| en(w)),
            );
            if let (Some(n), Some(u)) = (n, u) {
                if unit(&u) && (number_word(&n) || n.parse::<u32>().is_ok()) {
                    out.extend([n, u, "ago".to_string()]);
                    i += skip + 2;
                    continue;
                }
            }
        }
        // "mayo de 2023", "maio de 2023", "8 di maggio": the connector between a day, a month
        // and a year is left out, as English writes it.
        if matches!(w, "de" | "di" | "del" | "do" | "da")
            && out
                .last()
                .is_some_and(|p| MONTHS.contains(&p.as_str()) || p.parse::<u32>().is_ok())
            && words
                .get(i + 1)
                .is_some_and(|n| n.parse::<u32>().is_ok() || MONTHS.contains(&en(n).as_str()))
        {
            i += 1;
            continue;
        }
        let e = en(w);
        // "semaine dernière", "semana pasada", "mese scorso": the unit before its "last"/"this".
        if unit(&e) {
            if let Some(next) = words.get(i + 1).map(|w| en(w)) {
                if next == "last" || next == "this" {
                    out.extend([next, e]);
                    i += 2;
                    continue;
                }
            }
        }
        out.push(e);
        i += 1;
    }
    out.join(" ")
}

fn number_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "one"
            | "two"
            | "three"
            | "four"
            | "five"
            | "six"
            | "seven"
            | "eight"
            | "nine"
            | "ten"
            | "eleven"
            | "twelve"
    )
}

/// "may" is a month only where a month fits: after "in", "of", "since", "last", a day number, or
/// before a day number or a year ("I may go" is not a month).
fn prev_allows_may(prev: &str, next: &str) -> bool {
    matches!(
        prev,
        "in" | "of" | "since" | "during" | "early" | "late" | "mid" | "until" | "by"
    ) || prev.parse::<u32>().is_ok()
        || year_of(next).is_some()
        || next.parse::<u32>().is_ok()
}

fn iso_date(w: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(w, "%Y-%m-%d").ok()
}

/// Parses an RFC 3339 time (a request's `reference_time`).
pub fn parse_reference(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
        .or_else(|| {
            NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc())
        })
}

/// The wall clock, the reference when a request gives none.
pub fn now() -> DateTime<Utc> {
    Utc::now()
}

/// A time as RFC 3339 to the second, `Z` for UTC.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A day number as `YYYY-MM-DD` (an `explain` shows windows that way).
pub fn day_text(days: f64) -> String {
    let d =
        NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + chrono::Duration::days(days.floor() as i64);
    d.format("%Y-%m-%d").to_string()
}

/// A day's window, for tests and callers: [that day, the next).
pub fn day_window(y: i32, m: u32, d: u32) -> Option<Window> {
    NaiveDate::from_ymd_opt(y, m, d).map(|d| (day(d), day(d) + 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        parse_reference(s).unwrap()
    }

    fn days(y: i32, m: u32, d: u32) -> f64 {
        day(NaiveDate::from_ymd_opt(y, m, d).unwrap())
    }

    #[test]
    fn other_languages_name_times_too() {
        let r = at("2023-08-20T10:00:00Z"); // a Sunday
        let last_week = Some((days(2023, 8, 7), days(2023, 8, 14)));
        for (l, q) in [
            ("de", "Was habe ich letzte Woche gemacht?"),
            ("fr", "Qu'ai-je fait la semaine dernière ?"),
            ("es", "¿Qué hice la semana pasada?"),
            ("pt", "O que eu fiz na semana passada?"),
            ("it", "Cosa ho fatto la settimana scorsa?"),
        ] {
            assert_eq!(window_in(q, r, Some(l)), last_week, "{l}: {q}");
        }
        let three_weeks = Some((days(2023, 7, 27), days(2023, 8, 3)));
        for (l, q) in [
            ("de", "vor drei Wochen"),
            ("fr", "il y a trois semaines"),
            ("es", "hace 3 semanas"),
            ("pt", "há três semanas"),
            ("it", "tre settimane fa"),
        ] {
            assert_eq!(window_in(q, r, Some(l)), three_weeks, "{l}: {q}");
        }
        let yesterday = Some((days(2023, 8, 19), days(2023, 8, 20)));
        for (l, q) in [
            ("de", "gestern"),
            ("fr", "hier"),
            ("es", "ayer"),
            ("pt", "ontem"),
            ("it", "ieri"),
        ] {
            assert_eq!(window_in(q, r, Some(l)), yesterday, "{l}: {q}");
        }
        let may = Some((days(2023, 5, 1), days(2023, 6, 1)));
        for (l, q) in [
            ("de", "Was war im Mai 2023?"),
            ("fr", "en mai 2023"),
            ("es", "en mayo de 2023"),
            ("pt", "em maio de 2023"),
            ("it", "a maggio 2023"),
        ] {
            assert_eq!(window_in(q, r, Some(l)), may, "{l}: {q}");
        }
        assert_eq!(
            window_in("am 8. Mai 2023", r, Some("de")),
            Some((days(2023, 5, 8), days(2023, 5, 9)))
        );
        assert_eq!(
            window_in("le mois dernier", r, Some("fr")),
            Some((days(2023, 7, 1), days(2023, 8, 1)))
        );
        // No time named; English rules for other languages; the words of one language are not
        // another's ("hier" is "here" in German).
        assert_eq!(window_in("Wo wohnt Anna?", r, Some("de")), None);
        assert_eq!(window_in("Ich bin hier", r, Some("de")), None);
        assert_eq!(window_in("what happened last week", r, None), last_week);
    }

    #[test]
    fn names_no_time() {
        let r = at("2023-08-20T10:00:00Z");
        assert_eq!(window("When did Sam move to Denver?", r), None);
        assert_eq!(window("What may Sam like?", r), None);
        assert_eq!(window("How many dogs does Ana have?", r), None);
    }

    #[test]
    fn relative_days_weeks_months() {
        let r = at("2023-08-20T10:00:00Z"); // a Sunday
        assert_eq!(
            window("what did I eat yesterday?", r),
            Some((days(2023, 8, 19), days(2023, 8, 20)))
        );
        assert_eq!(
            window("plans for today", r),
            Some((days(2023, 8, 20), days(2023, 8, 21)))
        );
        assert_eq!(
            window("what happened last week", r),
            Some((days(2023, 8, 7), days(2023, 8, 14)))
        );
        assert_eq!(
            window("anything this week?", r),
            Some((days(2023, 8, 14), days(2023, 8, 21)))
        );
        assert_eq!(
            window("last month's trip", r),
            Some((days(2023, 7, 1), days(2023, 8, 1)))
        );
        assert_eq!(
            window("what did we do last year", r),
            Some((days(2022, 1, 1), days(2023, 1, 1)))
        );
        assert_eq!(
            window("three days ago", r),
            Some((days(2023, 8, 17), days(2023, 8, 18)))
        );
        assert_eq!(
            window("2 years ago", r),
            Some((days(2021, 1, 1), days(2022, 1, 1)))
        );
    }

    #[test]
    fn months_and_years() {
        let r = at("2023-08-20T10:00:00Z");
        assert_eq!(
            window("What did Caroline do last May?", r),
            Some((days(2023, 5, 1), days(2023, 6, 1)))
        );
        assert_eq!(
            window("the concert last September", r),
            Some((days(2022, 9, 1), days(2022, 10, 1)))
        );
        assert_eq!(
            window("What did Mel paint in 2022?", r),
            Some((days(2022, 1, 1), days(2023, 1, 1)))
        );
        assert_eq!(
            window("Where did she go in July 2023?", r),
            Some((days(2023, 7, 1), days(2023, 8, 1)))
        );
        assert_eq!(
            window("in May", r),
            Some((days(2023, 5, 1), days(2023, 6, 1)))
        );
        assert_eq!(
            window("in December", r),
            Some((days(2022, 12, 1), days(2023, 1, 1)))
        );
        assert_eq!(
            window("on 8 May 2023", r),
            Some((days(2023, 5, 8), days(2023, 5, 9)))
        );
        assert_eq!(
            window("on May 8, 2023", r),
            Some((days(2023, 5, 8), days(2023, 5, 9)))
        );
        assert_eq!(
            window("on 2023-05-08", r),
            Some((days(2023, 5, 8), days(2023, 5, 9)))
        );
        assert_eq!(
            window("last summer", r),
            Some((days(2022, 6, 1), days(2022, 9, 1)))
        );
    }

    #[test]
    fn two_times_name_none() {
        let r = at("2023-08-20T10:00:00Z");
        assert_eq!(window("between 2021 and 2022", r), None);
    }
}
