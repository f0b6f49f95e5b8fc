//! The time a query names ("last May", "in 2022", "yesterday", "3 weeks ago", "8 May 2023"),
//! as a window of event time that memory_query prefers (rank.rs, `time`). Relative phrases are
//! read against a reference time: the request's `reference_time`, or now.
//!
//! Only phrases that name a time say anything: "when did Sam move?" names none, and a
//! window is returned only when the query names exactly one.

use chrono::{DateTime, Datelike, NaiveDate, Utc};

/// [start, end) in days since the Unix epoch (fractions allowed).
pub type Window = (f64, f64);

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
