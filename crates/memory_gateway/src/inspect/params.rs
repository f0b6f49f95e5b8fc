//! What the pages take from a request and put into links: the memories page's filters, the
//! page size, `%`-encoding, the check that a redirect stays inside the inspector. Shared by
//! pages.rs (the handlers) and views.rs (the HTML), which import it and not each other's.

use serde::Deserialize;

/// `%`-encoding for a query-string value.
pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether `next` is a path of the inspector (never another site: an open redirect).
pub fn local_path(next: &str) -> bool {
    next.starts_with("/inspect/") && !next.starts_with("//") && !next.contains('\\')
}

/// The filters of the memories page, as the form sends them.
#[derive(Deserialize, Default, Debug)]
pub struct MemoryFilters {
    #[serde(default)]
    pub q: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub thread: String,
    #[serde(default)]
    pub tags: String,
    #[serde(default)]
    pub page: String,
}

/// Rows per page of the memories list.
pub const PAGE_SIZE: i64 = 50;
