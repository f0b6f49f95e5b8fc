//! The inspector's HTML. maud escapes every value it is given, so a memory, a block, a path or a
//! tenant id that holds markup shows as the text it is. No inline script or style (the
//! Content-Security-Policy forbids them): widths of bars and charts are SVG attributes, colours
//! are classes of assets/inspect.css, and every colour has a text beside it.

use super::params::{urlencode, MemoryFilters, PAGE_SIZE};
use super::Session;
use crate::db::DbError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};
use memory_core::rank::SIGNALS;
use serde_json::Value;

const NAV: [(&str, &str, &str); 9] = [
    ("overview", "/inspect/", "Overview"),
    ("memories", "/inspect/memories", "Memories"),
    ("blocks", "/inspect/blocks", "Core blocks"),
    ("threads", "/inspect/threads", "Threads"),
    ("files", "/inspect/files", "Files"),
    ("proposals", "/inspect/proposals", "Proposals"),
    ("summaries", "/inspect/summaries", "Summaries"),
    ("webhooks", "/inspect/webhooks", "Webhooks"),
    ("export", "/inspect/export", "Export"),
];

/// Colours of the explain bar (classes `sig-0` .. of assets/inspect.css): a signal takes the
/// one of its place in memory_core::rank::SIGNALS, so a new signal needs no new rule here.
const PALETTE: usize = 12;

fn page(
    status: StatusCode,
    s: Option<&Session>,
    active: &str,
    title: &str,
    body: Markup,
) -> Response {
    let m = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · memory inspector" }
                link rel="stylesheet" href="/inspect/assets/inspect.css";
                script src="/inspect/assets/inspect.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    span.brand { "memory_ext inspector" }
                    @if let Some(s) = s {
                        nav aria-label="Pages" {
                            ul {
                                @for (key, href, label) in NAV {
                                    li { a href=(href) aria-current=[(key == active).then_some("page")] { (label) } }
                                }
                            }
                        }
                        div.who {
                            "Tenant " strong { (s.grant.tenant.user_id) } " · token " (s.grant.name) " · "
                            @if s.can_write() { "read-write" } @else { span.badge { "read-only" } }
                            form.inline method="post" action="/inspect/logout" {
                                input type="hidden" name="csrf" value=(s.csrf);
                                button type="submit" { "Log out" }
                            }
                        }
                    }
                }
                main #main tabindex="-1" { h1 { (title) } (body) }
            }
        }
    };
    let mut r = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        m.into_string(),
    )
        .into_response();
    r.headers_mut().remove(header::CACHE_CONTROL);
    r
}

fn ok(s: &Session, active: &str, title: &str, body: Markup) -> Response {
    page(StatusCode::OK, Some(s), active, title, body)
}

pub fn error_page(status: StatusCode, message: &str, s: Option<&Session>) -> Response {
    page(
        status,
        s,
        "",
        status.canonical_reason().unwrap_or("Error"),
        html! { p.error role="alert" { (message) } p { a href="/inspect/" { "Back to the overview" } } },
    )
}

pub fn login(next: Option<&str>, error: Option<&str>, status: StatusCode) -> Response {
    page(
        status,
        None,
        "",
        "Log in",
        html! {
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form.login method="post" action="/inspect/login" {
                label for="token" { "Bearer token" }
                input #token type="password" name="token" autocomplete="off" required autofocus;
                @if let Some(n) = next { input type="hidden" name="next" value=(n); }
                button type="submit" { "Log in" }
            }
            p.hint { "A token of the gateway's configuration whose \"inspect\" is \"read\" or \"read-write\". The page keeps a session cookie, not the token." }
        },
    )
}

fn csrf(s: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(s.csrf); }
}

fn notice_box(n: Option<&str>) -> Markup {
    html! { @if let Some(n) = n { p.notice role="status" { (n) } } }
}

fn text<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn num(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

/// A timestamp as `YYYY-MM-DD HH:MM` (UTC as stored), or a dash.
fn ts(v: &Value, k: &str) -> String {
    match v.get(k).and_then(Value::as_str) {
        Some(t) if t.len() >= 16 => t[..16].replace('T', " "),
        Some(t) => t.to_string(),
        None => "—".into(),
    }
}

fn json_inline(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn count_table(caption: &str, rows: Vec<(String, String)>) -> Markup {
    html! {
        table {
            caption { (caption) }
            tbody {
                @for (k, v) in &rows { tr { th scope="row" { (k) } td.num { (v) } } }
                @if rows.is_empty() { tr { td colspan="2" { "none" } } }
            }
        }
    }
}

fn object_rows(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.clone(), json_inline(v))).collect())
        .unwrap_or_default()
}

/// Memories created per day as SVG bars, with the same numbers in a table for screen readers
/// and for reading without the chart.
fn day_chart(days: &[Value]) -> Markup {
    let max = days.iter().map(|d| num(d, "n")).fold(1.0, f64::max);
    let w = 100.0 / days.len().max(1) as f64;
    html! {
        figure.chart {
            svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label="Memories created per day" {
                @for (i, d) in days.iter().enumerate() {
                    @let h = num(d, "n") / max * 38.0;
                    rect.bar x=(format!("{:.2}", i as f64 * w + w * 0.1)) y=(format!("{:.2}", 40.0 - h))
                         width=(format!("{:.2}", w * 0.8)) height=(format!("{:.2}", h)) {
                        title { (text(d, "day")) ": " (num(d, "n")) }
                    }
                }
            }
            figcaption {
                "Memories created per day (UTC), the last " (days.len()) " days. "
                details { summary { "As a table" }
                    table { thead { tr { th scope="col" { "Day" } th scope="col" { "Created" } } }
                        tbody { @for d in days { tr { td { (text(d, "day")) } td.num { (num(d, "n")) } } } } }
                }
            }
        }
    }
}

pub fn overview(s: &Session, v: &Value, notice: Option<&str>) -> Response {
    let m = &v["memories"];
    let cats: Vec<(String, String)> = m["by_category"]
        .as_array()
        .map(|a| {
            a.iter()
                .take(20)
                .map(|c| {
                    let name = text(c, "category");
                    (
                        if name.is_empty() {
                            "(none)".to_string()
                        } else {
                            name.to_string()
                        },
                        json_inline(&c["n"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let empty = vec![];
    let days = m["per_day"].as_array().unwrap_or(&empty);
    let emb = &v["embedding"];
    ok(
        s,
        "overview",
        "Overview",
        html! {
            (notice_box(notice))
            section.cards {
                div.card { h2 { "Memories" } p.big { (json_inline(&m["total"])) } p { "all states" } }
                div.card { h2 { "Pending proposals" } p.big { a href="/inspect/proposals" { (json_inline(&v["proposals_pending"])) } } p { "waiting for consent" } }
                div.card { h2 { "Embedding backlog" } p.big { (num(&emb["backlog"], "item") + num(&emb["backlog"], "message") + num(&emb["backlog"], "file")) }
                    p { "memories " (json_inline(&emb["backlog"]["item"])) ", messages " (json_inline(&emb["backlog"]["message"])) ", files " (json_inline(&emb["backlog"]["file"])) } }
                div.card { h2 { "Embedding failures" } p.big { (num(&emb["failures"], "retrying") + num(&emb["failures"], "gave_up")) }
                    p { "retrying " (json_inline(&emb["failures"]["retrying"])) ", gave up " (json_inline(&emb["failures"]["gave_up"])) } }
            }
            section {
                h2 { "Memories over time" }
                (day_chart(days))
            }
            section.grid {
                (count_table("By state", object_rows(m.get("by_state"))))
                (count_table("By kind", object_rows(m.get("by_kind"))))
                (count_table("By category (top 20)", cats))
            }
            section {
                h2 { "Context usage per thread" }
                div.scroll { table {
                    thead { tr { th scope="col" { "Thread" } th scope="col" { "Agent" } th scope="col" { "Messages" } th scope="col" { "In context" } th scope="col" { "Context tokens" } th scope="col" { "Updated" } } }
                    tbody { @for t in v["threads"].as_array().unwrap_or(&empty) {
                        tr { td { a href=(format!("/inspect/threads/{}", urlencode(text(t, "thread_id")))) { (text(t, "thread_id")) } }
                             td { (text(t, "agent_id")) } td.num { (json_inline(&t["messages"])) }
                             td.num { (json_inline(&t["context_messages"])) } td.num { (json_inline(&t["context_tokens"])) } td { (ts(t, "updated_at")) } }
                    } }
                } }
            }
            section {
                h2 { "Worker jobs" }
                div.scroll { table {
                    thead { tr { th scope="col" { "Job" } th scope="col" { "Scheduled" } th scope="col" { "Last run" } th scope="col" { "Took (ms)" } th scope="col" { "Runs" } th scope="col" { "Failures" } th scope="col" { "Last error at" } } }
                    tbody { @for w in v["worker"].as_array().unwrap_or(&empty) {
                        tr { td { (text(w, "job")) } td { @if w["scheduled"].as_bool() == Some(true) { "yes" } @else { "no" } }
                             td { (ts(w, "last_finished_at")) } td.num { (json_inline(&w["last_duration_ms"])) }
                             td.num { (json_inline(&w["runs"])) } td.num { (json_inline(&w["failures"])) } td { (ts(w, "last_error_at")) } }
                    } }
                } }
                @let errs = v["extraction"]["errors"].as_array().cloned().unwrap_or_default();
                @let fails = emb["recent_failures"].as_array().cloned().unwrap_or_default();
                @if !errs.is_empty() || !fails.is_empty() {
                    h3 { "This tenant's errors" }
                    ul { @for e in &errs { li { "extraction, thread " (text(e, "thread_id")) ": " (text(e, "last_error")) " (attempts " (json_inline(&e["attempts"])) ")" } }
                         @for f in &fails { li { "embedding of " (text(f, "target")) " " (text(f, "row_id")) ": " (text(f, "last_error")) " (attempts " (json_inline(&f["attempts"])) @if f["gave_up"].as_bool() == Some(true) { ", gave up" } ")" } } }
                }
                p { "Ended runs waiting for the worker: " (json_inline(&v["runs_waiting"])) }
            }
            section {
                h2 { "LLM use per day" }
                div.scroll { table {
                    thead { tr { th scope="col" { "Day" } th scope="col" { "Extraction calls" } th scope="col" { "Tokens in" } th scope="col" { "Tokens out" } th scope="col" { "Memories extracted" } th scope="col" { "Consolidation calls" } } }
                    tbody {
                        @for u in v["llm_usage"].as_array().unwrap_or(&empty) {
                            tr { td { (text(u, "day")) } td.num { (json_inline(&u["extraction_calls"])) } td.num { (json_inline(&u["tokens_in"])) }
                                 td.num { (json_inline(&u["tokens_out"])) } td.num { (json_inline(&u["extraction_writes"])) } td.num { (json_inline(&u["consolidation_calls"])) } }
                        }
                        @if v["llm_usage"].as_array().is_none_or(|a| a.is_empty()) { tr { td colspan="6" { "No LLM calls in the period." } } }
                    }
                } }
            }
            section {
                h2 { "Recent events" }
                div.scroll { table {
                    thead { tr { th scope="col" { "When" } th scope="col" { "Where" } th scope="col" { "What" } th scope="col" { "Status" } th scope="col" { "Memory" } th scope="col" { "Category" } th scope="col" { "By" } } }
                    tbody { @for e in v["events"].as_array().unwrap_or(&empty) {
                        tr { td { (ts(e, "ts")) } td { (text(e, "node")) } td { (text(e, "op")) }
                             td { (text(e, "status")) @if let Some(c) = e["sqlstate"].as_str() { " " (c) } }
                             td { @if let Some(id) = e["memory_id"].as_str() { a href=(format!("/inspect/memories/{}", urlencode(id))) { (short(id)) } } }
                             td { (text(e, "category")) } td { (text(e, "actor")) } }
                    } }
                } }
            }
        },
    )
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn filters_form(f: &MemoryFilters) -> Markup {
    let sel = |name: &str, current: &str, options: &[&str]| {
        html! {
            label { (name.replace('_', " ")) " "
                select name=(name) {
                    option value="" selected[current.is_empty()] { "any" }
                    @for o in options { option value=(o) selected[current == *o] { (o) } }
                }
            }
        }
    };
    html! {
        form.filters method="get" action="/inspect/memories" role="search" {
            label.wide { "Search as the agent does (memory_query) " input type="search" name="q" value=(f.q) placeholder="leave empty to list"; }
            (sel("kind", &f.kind, &["semantic", "episodic", "procedural", "insight", "archival", "detail"]))
            (sel("state", &f.state, &["active", "soft_deleted", "superseded", "purged"]))
            label { "category " input name="category" value=(f.category) size="12"; }
            label { "updated from " input type="date" name="from" value=(f.from); }
            label { "before " input type="date" name="to" value=(f.to); }
            label { "actor " input name="actor" value=(f.actor) size="10"; }
            label { "thread " input name="thread" value=(f.thread) size="10"; }
            label { "tags " input name="tags" value=(f.tags) size="12" placeholder="a,b"; }
            button type="submit" { "Show" }
        }
    }
}

/// What each signal added to a result's score, as a stacked bar (positive signals, widths in
/// proportion) and as text (every signal that added or took anything).
fn explain_bar(e: &Value) -> Markup {
    let signals = &e["signals"];
    // (name, value, colour class) of every signal that added or took anything.
    let parts: Vec<(&str, f64, String)> = SIGNALS
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name, num(signals, s.name), format!("sig-{}", i % PALETTE)))
        .filter(|(_, v, _)| *v != 0.0)
        .collect();
    let total: f64 = parts.iter().filter(|p| p.1 > 0.0).map(|p| p.1).sum();
    // Each positive signal's segment: its name, value, left edge and width in percent.
    let mut x = 0.0;
    let segments: Vec<(&str, &str, f64, f64, f64)> = parts
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|(k, v, class)| {
            let w = v / total.max(1e-9) * 100.0;
            x += w;
            (*k, class.as_str(), *v, x - w, w)
        })
        .collect();
    html! {
        div.explain {
            svg.stack viewBox="0 0 100 6" preserveAspectRatio="none" role="img"
                aria-label=(format!("score {:.3}: {}", num(e, "score"), parts.iter().map(|(k, v, _)| format!("{k} {v:.3}")).collect::<Vec<_>>().join(", "))) {
                @for (k, class, v, x, w) in &segments {
                    rect class=(format!("sig {class}")) data-signal=(k) x=(format!("{x:.2}")) y="0" width=(format!("{w:.2}")) height="6" {
                        title { (k) " " (format!("{v:.3}")) }
                    }
                }
            }
            p.legend {
                "score " strong { (format!("{:.3}", num(e, "score"))) }
                @for (k, v, class) in &parts { " · " span class=(format!("key {class}")) { "■" } " " (k) " " (format!("{v:+.3}")) }
                " · similarity " (format!("{:.3}", num(e, "similarity"))) " · found by " (text(e, "pool"))
            }
        }
    }
}

pub fn memories_search(s: &Session, f: &MemoryFilters, v: &Value) -> Response {
    let resp = &v["response"];
    let rows = &v["rows"];
    let empty = vec![];
    let items: Vec<&Value> = resp["items"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|i| {
            f.thread.is_empty()
                || rows[text(i, "id")]["thread_id"].as_str() == Some(f.thread.as_str())
        })
        .collect();
    ok(
        s,
        "memories",
        "Memories",
        html! {
            (filters_form(f))
            p { (items.len()) " result(s) for " q { (f.q) } " as the agent would get them, best first"
                @if let Some(r) = resp["empty_reason"].as_str() { " (empty: " (r) ")" }
                @if !f.thread.is_empty() { ", only those of thread " (f.thread) } "." }
            ol.results {
                @for i in &items {
                    @let id = text(i, "id");
                    @let row = &rows[id];
                    li {
                        p { a href=(format!("/inspect/memories/{}", urlencode(id))) { (text(row, "text")) } }
                        p.meta { (text(i, "category")) " · " (text(row, "kind")) " · " (text(row, "state"))
                            @if let Some(t) = row["thread_id"].as_str() { " · thread " (t) }
                            @if let Some(a) = row["actor_id"].as_str() { " · actor " (a) }
                            " · importance " (json_inline(&i["importance"])) }
                        @if let Some(e) = i.get("explain") { (explain_bar(e)) }
                    }
                }
            }
        },
    )
}

pub fn memories_list(s: &Session, f: &MemoryFilters, v: &Value, page_no: i64) -> Response {
    let empty = vec![];
    let all = v.as_array().unwrap_or(&empty);
    let more = all.len() as i64 > PAGE_SIZE;
    let rows = &all[..all.len().min(PAGE_SIZE as usize)];
    let base =
        format!(
        "/inspect/memories?kind={}&category={}&state={}&from={}&to={}&actor={}&thread={}&tags={}",
        urlencode(&f.kind), urlencode(&f.category), urlencode(&f.state), urlencode(&f.from),
        urlencode(&f.to), urlencode(&f.actor), urlencode(&f.thread), urlencode(&f.tags)
    );
    ok(
        s,
        "memories",
        "Memories",
        html! {
            (filters_form(f))
            div.scroll { table.memories {
                caption { "Newest change first, page " (page_no + 1) }
                thead { tr { th scope="col" { "Memory" } th scope="col" { "Kind" } th scope="col" { "Category" } th scope="col" { "State" } th scope="col" { "Imp." } th scope="col" { "Tags" } th scope="col" { "Updated" } } }
                tbody {
                    @for r in rows {
                        tr { td { a href=(format!("/inspect/memories/{}", urlencode(text(r, "id")))) { (text(r, "text")) } @if r["pinned"].as_bool() == Some(true) { " " span.badge { "pinned" } } }
                             td { (text(r, "kind")) } td { (text(r, "category")) } td { (text(r, "state")) }
                             td.num { (json_inline(&r["importance"])) }
                             td { (r["tags"].as_array().map(|t| t.iter().map(json_inline).collect::<Vec<_>>().join(", ")).unwrap_or_default()) }
                             td { (ts(r, "updated_at")) } }
                    }
                    @if rows.is_empty() { tr { td colspan="7" { "No memory matches." } } }
                }
            } }
            nav.pager aria-label="Pages of results" {
                @if page_no > 0 { a href=(format!("{base}&page={}", page_no - 1)) rel="prev" { "← Newer" } }
                @if more { a href=(format!("{base}&page={}", page_no + 1)) rel="next" { "Older →" } }
            }
        },
    )
}

pub fn memories_refused(s: &Session, f: &MemoryFilters, e: &DbError) -> Response {
    let status = match e {
        DbError::Sql { .. } => StatusCode::BAD_REQUEST,
        DbError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    page(
        status,
        Some(s),
        "memories",
        "Memories",
        html! {
            (filters_form(f))
            p.error role="alert" { (e.to_string()) }
        },
    )
}

/// A line diff: removed lines, then added ones, marked with `-`/`+` as well as colour.
fn diff(old: &str, new: &str) -> Markup {
    let d = similar::TextDiff::from_lines(old, new);
    html! {
        pre.diff {
            @for c in d.iter_all_changes() {
                @match c.tag() {
                    similar::ChangeTag::Delete => del { "- " (c.value().trim_end_matches('\n')) "\n" },
                    similar::ChangeTag::Insert => ins { "+ " (c.value().trim_end_matches('\n')) "\n" },
                    similar::ChangeTag::Equal => span { "  " (c.value().trim_end_matches('\n')) "\n" },
                }
            }
        }
    }
}

fn history_table(h: &[Value]) -> Markup {
    html! {
        ol.history {
            @for e in h {
                li {
                    p.meta { strong { (text(e, "event")) } " · " (ts(e, "ts")) " · by " (text(e, "actor"))
                        @if let Some(r) = e["meta"]["reason"].as_str() { " · " (r) } }
                    @match (e["old_ref"].as_str(), e["new_ref"].as_str()) {
                        (Some(o), Some(n)) if o != n && e["event"] != "LINK" => (diff(o, n)),
                        (None, Some(n)) if e["event"] != "LINK" => (diff("", n)),
                        (Some(o), None) => (diff(o, "")),
                        _ => {}
                    }
                }
            }
            @if h.is_empty() { li { "No history." } }
        }
    }
}

pub fn memory(s: &Session, v: &Value, notice: Option<&str>) -> Response {
    let i = &v["item"];
    let id = text(i, "id");
    let state = text(i, "state");
    let empty = vec![];
    let base = format!("/inspect/memories/{}", urlencode(id));
    let tags = i["tags"]
        .as_array()
        .map(|t| t.iter().map(json_inline).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    ok(
        s,
        "memories",
        "Memory",
        html! {
            (notice_box(notice))
            p.memory-text { (text(i, "text")) }
            dl.facts {
                dt { "Id" } dd { code { (id) } }
                dt { "Kind" } dd { (text(i, "kind")) }
                dt { "State" } dd { (state) @if let Some(p) = i["purge_at"].as_str() { " (purged after " (p.get(..16).unwrap_or(p).replace('T', " ")) ")" } }
                dt { "Category" } dd { (text(i, "category")) }
                dt { "Importance" } dd { (json_inline(&i["importance"])) @if i["pinned"].as_bool() == Some(true) { ", pinned" } }
                dt { "Tags" } dd { (tags) }
                dt { "Happened" } dd { (ts(i, "happened_at")) }
                dt { "Updated" } dd { (ts(i, "updated_at")) }
                @if let Some(t) = i["thread_id"].as_str() { dt { "Thread" } dd { a href=(format!("/inspect/threads/{}", urlencode(t))) { (t) } } }
                @if let Some(a) = i["actor_id"].as_str() { dt { "Actor" } dd { (a) } }
                @if let Some(c) = i["content"].as_str() { dt { "Detail" } dd { pre.content { (c) } } }
                @if i["metadata"].as_object().is_some_and(|m| !m.is_empty()) { dt { "Metadata" } dd { code { (i["metadata"].to_string()) } } }
            }
            @if s.can_write() {
                section.actions {
                    h2 { "Change" }
                    @if state == "active" {
                        form method="post" action=(format!("{base}/edit")) {
                            (csrf(s))
                            label { "Text " textarea name="text" rows="3" required { (text(i, "text")) } }
                            label { "Category " input name="category" value=(text(i, "category")); }
                            label { "Importance " input type="number" name="importance" min="1" max="5" value=(json_inline(&i["importance"])); }
                            label { "Tags " input name="tags" value=(tags); }
                            label.check { input type="checkbox" name="pinned" checked[i["pinned"].as_bool() == Some(true)]; " pinned" }
                            button type="submit" { "Save" }
                        }
                        form method="post" action=(format!("{base}/supersede")) {
                            (csrf(s))
                            label { "A newer fact that replaces this one " textarea name="text" rows="2" required {} }
                            button type="submit" { "Supersede" }
                        }
                    }
                    @if state == "soft_deleted" {
                        form method="post" action=(format!("{base}/restore")) { (csrf(s)) button type="submit" { "Restore" } }
                    } @else if state != "purged" {
                        form method="post" action=(format!("{base}/forget")) data-confirm="Forget this memory? It can be restored until it is purged." {
                            (csrf(s)) button.danger type="submit" { "Forget" }
                        }
                    }
                }
            }
            section {
                h2 { "Supersede chain" }
                @let earlier = v["supersedes"].as_array().unwrap_or(&empty);
                @let later = v["superseded_by"].as_array().unwrap_or(&empty);
                @if earlier.is_empty() && later.is_empty() { p { "Neither supersedes nor is superseded by another memory." } }
                @if !earlier.is_empty() { h3 { "Replaces (supersedes)" } ul { @for e in earlier { li { a href=(format!("/inspect/memories/{}", urlencode(text(e, "id")))) { (text(e, "text")) } " (" (text(e, "state")) ")" } } } }
                @if !later.is_empty() { h3 { "Replaced by (superseded_by)" } ul { @for e in later { li { a href=(format!("/inspect/memories/{}", urlencode(text(e, "id")))) { (text(e, "text")) } " (" (text(e, "state")) ")" } } } }
            }
            section {
                h2 { "Relations" }
                ul { @for r in v["relations"].as_array().unwrap_or(&empty) {
                    li { (text(r, "type")) " " (text(r, "direction")) " " a href=(format!("/inspect/memories/{}", urlencode(text(r, "id")))) { (text(r, "text")) }
                         " (strength " (format!("{:.2}", num(r, "strength"))) ", " (text(r, "state")) ")" }
                }
                @if v["relations"].as_array().is_none_or(|a| a.is_empty()) { li { "None." } } }
            }
            section {
                h2 { "History" }
                (history_table(v["history"].as_array().unwrap_or(&empty)))
            }
        },
    )
}

pub fn agents(s: &Session, v: &Value) -> Response {
    let empty = vec![];
    ok(
        s,
        "blocks",
        "Core blocks",
        html! {
            ul.agents { @for a in v.as_array().unwrap_or(&empty) {
                li { a href=(format!("/inspect/blocks/{}", urlencode(text(a, "agent_id")))) { (text(a, "agent_id")) }
                     ": " (a["blocks"].as_array().map(|b| b.iter().map(|x| text(x, "label").to_string()).collect::<Vec<_>>().join(", ")).unwrap_or_default()) }
            }
            @if v.as_array().is_none_or(|a| a.is_empty()) { li { "This tenant has no agent." } } }
        },
    )
}

pub fn blocks(s: &Session, v: &Value, notice: Option<&str>) -> Response {
    let agent = text(v, "agent_id");
    let empty = vec![];
    ok(
        s,
        "blocks",
        &format!("Core blocks of {agent}"),
        html! {
            (notice_box(notice))
            @for b in v["blocks"].as_array().unwrap_or(&empty) {
                @let label = text(b, "label");
                section.block {
                    h2 { (label) @if b["read_only"].as_bool() == Some(true) { " " span.badge { "read-only" } } }
                    @if let Some(d) = b["description"].as_str() { p.hint { (d) } }
                    p.meta { (json_inline(&b["chars"])) " of " (json_inline(&b["char_limit"])) " characters · version " (json_inline(&b["version"])) " · "
                        a href=(format!("/inspect/blocks/{}/{}", urlencode(agent), urlencode(label))) { "history" } }
                    @if s.can_write() && b["read_only"].as_bool() != Some(true) {
                        form method="post" action=(format!("/inspect/blocks/{}/{}", urlencode(agent), urlencode(label))) {
                            (csrf(s))
                            input type="hidden" name="version" value=(json_inline(&b["version"]));
                            label { "Value" textarea name="value" rows="6" maxlength=(json_inline(&b["char_limit"])) data-counter="true" { (text(b, "value")) } }
                            button type="submit" { "Save " (label) }
                        }
                    } @else {
                        pre.value { (text(b, "value")) }
                    }
                }
            }
            section {
                h2 { "Compiled prompt (" (json_inline(&v["tokens"])) " tokens, cl100k_base)" }
                p.hint { "compile_core_blocks, exactly as the model sees it." }
                pre #compiled .prompt { (text(v, "compiled")) }
            }
        },
    )
}

pub fn block_history(s: &Session, agent: &str, v: &Value) -> Response {
    let b = &v["block"];
    let empty = vec![];
    ok(
        s,
        "blocks",
        &format!("History of block {} ({agent})", text(b, "label")),
        html! {
            p { a href=(format!("/inspect/blocks/{}", urlencode(agent))) { "← Blocks of " (agent) } " · version " (json_inline(&b["version"])) }
            (history_table(v["history"].as_array().unwrap_or(&empty)))
        },
    )
}

pub fn threads(s: &Session, v: &Value) -> Response {
    let empty = vec![];
    ok(
        s,
        "threads",
        "Threads",
        html! {
            div.scroll { table {
                thead { tr { th scope="col" { "Thread" } th scope="col" { "Agent" } th scope="col" { "Messages" } th scope="col" { "Context tokens" } th scope="col" { "Revision" } th scope="col" { "Updated" } } }
                tbody {
                    @for t in v.as_array().unwrap_or(&empty) {
                        tr { td { a href=(format!("/inspect/threads/{}", urlencode(text(t, "thread_id")))) { (text(t, "thread_id")) } }
                             td { (text(t, "agent_id")) } td.num { (json_inline(&t["messages"])) } td.num { (json_inline(&t["context_tokens"])) }
                             td.num { (json_inline(&t["revision"])) } td { (ts(t, "updated_at")) } }
                    }
                    @if v.as_array().is_none_or(|a| a.is_empty()) { tr { td colspan="6" { "No thread." } } }
                }
            } }
        },
    )
}

pub fn thread(s: &Session, v: &Value) -> Response {
    let t = &v["thread"];
    let empty = vec![];
    let msgs = v["messages"].as_array().unwrap_or(&empty);
    // What each summary folded: the messages out of context numbered between the previous
    // summary and it.
    let mut folded: Vec<(i64, i64, usize)> = vec![];
    let mut prev = 0;
    for m in msgs
        .iter()
        .filter(|m| m["is_summary"].as_bool() == Some(true))
    {
        let seq = m["seq"].as_i64().unwrap_or(0);
        let out: Vec<i64> = msgs
            .iter()
            .filter(|x| {
                x["in_context"].as_bool() == Some(false) && x["is_summary"].as_bool() != Some(true)
            })
            .filter_map(|x| x["seq"].as_i64())
            .filter(|q| *q > prev && *q < seq)
            .collect();
        folded.push((seq, out.first().copied().unwrap_or(0), out.len()));
        prev = seq;
    }
    ok(
        s,
        "threads",
        &format!("Thread {}", text(t, "thread_id")),
        html! {
            p.meta { "agent " (text(t, "agent_id")) " · " (json_inline(&t["messages"])) " messages · revision " (json_inline(&t["revision"]))
                " (delta header last reported " (json_inline(&t["reported_rev"])) ")" }
            section {
                h2 { "Messages" @if msgs.len() >= 500 { " (the newest 500)" } }
                ol.messages {
                    @for m in msgs {
                        @let summary = m["is_summary"].as_bool() == Some(true);
                        li class=(format!("msg role-{}{}{}", text(m, "role"), if summary { " summary" } else { "" }, if m["in_context"].as_bool() == Some(false) { " folded" } else { "" })) {
                            p.meta { "#" (json_inline(&m["seq"])) " · " strong { (text(m, "role")) }
                                @if let Some(n) = m["name"].as_str() { " (" (n) ")" }
                                " · " (json_inline(&m["tokens"])) " tokens · " (ts(m, "created_at"))
                                @if summary { " · " span.badge { "summary" }
                                    @if let Some((_, from, n)) = folded.iter().find(|(q, _, _)| Some(*q) == m["seq"].as_i64()) {
                                        " folded " (n) " message(s)" @if *n > 0 { " from #" (from) } } }
                                @if m["in_context"].as_bool() == Some(false) { " · " span.badge { "out of context" } } }
                            @if !text(m, "content").is_empty() { pre.content { (text(m, "content")) } }
                            @if let Some(calls) = m["tool_calls"].as_array() {
                                @for c in calls { p.tool { "tool call " code { (c["function"]["name"].as_str().unwrap_or("")) } " " code { (json_inline(&c["function"]["arguments"])) } } }
                            }
                            @if let Some(id) = m["tool_call_id"].as_str() { p.tool { "result of tool call " code { (id) } } }
                        }
                    }
                }
            }
            section {
                h2 { "Episodes" }
                ul { @for e in v["episodes"].as_array().unwrap_or(&empty) {
                    li { a href=(format!("/inspect/memories/{}", urlencode(text(e, "id")))) { (text(e, "text")) } " · " (ts(e, "happened_at")) }
                }
                @if v["episodes"].as_array().is_none_or(|a| a.is_empty()) { li { "No episode yet." } } }
            }
            section {
                h2 { "Change log (what the delta header reports)" }
                div.scroll { table {
                    thead { tr { th scope="col" { "Rev" } th scope="col" { "Event" } th scope="col" { "Memory / message" } th scope="col" { "Text" } th scope="col" { "When" } } }
                    tbody { @for c in v["changes"].as_array().unwrap_or(&empty) {
                        tr { td.num { (json_inline(&c["rev"])) } td { (text(c, "event")) } td { code { (short(text(c, "memory_id"))) } }
                             td { (c["meta"]["text"].as_str().unwrap_or("")) } td { (ts(c, "ts")) } }
                    } }
                } }
            }
        },
    )
}

pub fn files(
    s: &Session,
    v: &Value,
    prefix: &Option<String>,
    search: &Option<String>,
    grep: &Option<String>,
) -> Response {
    let empty = vec![];
    ok(
        s,
        "files",
        "Memory files",
        html! {
            form.filters method="get" action="/inspect/files" role="search" {
                label { "Folder " input name="prefix" value=(prefix.clone().unwrap_or_default()) placeholder="/memories/"; }
                label { "Search " input type="search" name="q" value=(search.clone().unwrap_or_default()); }
                label { "Grep (regular expression) " input name="grep" value=(grep.clone().unwrap_or_default()); }
                button type="submit" { "Show" }
            }
            @if let Some(r) = v["search"].as_array() {
                section { h2 { "Search results" }
                    ol { @for f in r { li { a href=(format!("/inspect/files/view?path={}", urlencode(text(f, "path")))) { (text(f, "path")) }
                        " — " (text(f, "snippet")) } }
                         @if r.is_empty() { li { "Nothing found." } } } }
            }
            @if let Some(r) = v["grep"].as_array() {
                section { h2 { "Lines matching" }
                    ul.grep { @for g in r { li { a href=(format!("/inspect/files/view?path={}", urlencode(text(g, "path")))) { (text(g, "path")) }
                        ":" (json_inline(&g["line"])) ": " code { (text(g, "text")) } } }
                         @if r.is_empty() { li { "No line matches." } } } }
            }
            section { h2 { "Tree" }
                ul.tree { @for f in v["files"].as_array().unwrap_or(&empty) {
                    @let path = text(f, "path");
                    @let depth = path.trim_matches('/').matches('/').count();
                    li class=(format!("depth-{}", depth.min(6))) {
                        a href=(format!("/inspect/files/view?path={}", urlencode(path))) { (path) }
                        @if let Some(t) = f["title"].as_str() { " — " (t) }
                        " · " (json_inline(&f["chars"])) " chars · " (ts(f, "updated_at"))
                    }
                }
                @if v["files"].as_array().is_none_or(|a| a.is_empty()) { li { "No file." } } }
            }
        },
    )
}

pub fn file(s: &Session, v: &Value) -> Response {
    let f = &v["file"];
    let empty = vec![];
    ok(
        s,
        "files",
        &format!("File {}", text(f, "path")),
        html! {
            p.meta { @if let Some(t) = f["title"].as_str() { (t) " · " } (json_inline(&f["chars"])) " characters · updated " (ts(f, "updated_at")) }
            pre.content { (text(f, "content")) }
            section { h2 { "History" } (history_table(v["history"].as_array().unwrap_or(&empty))) }
        },
    )
}

pub fn proposals(s: &Session, v: &Value, notice: Option<&str>) -> Response {
    let empty = vec![];
    ok(
        s,
        "proposals",
        "Proposals",
        html! {
            (notice_box(notice))
            p.hint { "Inferred changes to sensitive fields wait here for consent (docs/api.md \"Consent\")." }
            div.scroll { table {
                thead { tr { th scope="col" { "Proposed memory" } th scope="col" { "Category" } th scope="col" { "Policy" } th scope="col" { "Status" } th scope="col" { "Proposed" } th scope="col" { "Decision" } } }
                tbody {
                    @for p in v.as_array().unwrap_or(&empty) {
                        @let id = text(p, "id");
                        tr { td { (text(p, "text")) } td { (text(p, "category")) } td { (text(p, "policy")) } td { (text(p, "status")) }
                             td { (ts(p, "created_at")) }
                             td { @if text(p, "status") == "pending" && s.can_write() {
                                    form.inline method="post" action=(format!("/inspect/proposals/{}/approve", urlencode(id))) { (csrf(s)) button type="submit" { "Approve" } }
                                    form.inline method="post" action=(format!("/inspect/proposals/{}/reject", urlencode(id))) { (csrf(s)) button.danger type="submit" { "Reject" } }
                                  } @else if let Some(by) = p["decided_by"].as_str() {
                                    (by) " · " (ts(p, "decided_at"))
                                    @if let Some(m) = p["memory_id"].as_str() { " · " a href=(format!("/inspect/memories/{}", urlencode(m))) { "memory" } }
                                  } }
                        }
                    }
                    @if v.as_array().is_none_or(|a| a.is_empty()) { tr { td colspan="6" { "No proposal." } } }
                }
            } }
        },
    )
}

/// How a summary stands, in words: a stale one's answer is the last written.
fn summary_state(v: &Value) -> &'static str {
    match (v["version"].as_i64().unwrap_or(0), v["stale"].as_bool()) {
        (0, _) => "not written yet",
        (_, Some(true)) => "stale",
        _ => "current",
    }
}

/// The tenant's summaries (docs/api.md "Summaries"): each question with its current answer.
pub fn summaries(s: &Session, v: &Value) -> Response {
    let empty = vec![];
    let all = v.as_array().unwrap_or(&empty);
    ok(
        s,
        "summaries",
        "Summaries",
        html! {
            p.hint { "Questions about this tenant's memories whose answers the worker keeps current: the tenant's own (memory_summary_define) and the built-in ones (the profile, each entity five memories name, each project). A summary is stale once a memory it rests on changes, until the worker writes its next version (docs/api.md \"Summaries\")." }
            div.scroll { table {
                thead { tr { th scope="col" { "Summary" } th scope="col" { "Question" } th scope="col" { "Answer" } th scope="col" { "Version" } th scope="col" { "State" } th scope="col" { "Written" } } }
                tbody {
                    @for m in all {
                        tr { td { a href=(format!("/inspect/summaries/{}", urlencode(text(m, "name")))) { (text(m, "name")) }
                                  @if m["builtin"].as_bool() == Some(true) { " " span.badge { "built-in" } } }
                             td { (text(m, "question")) } td { (text(m, "answer")) }
                             td.num { (json_inline(&m["version"])) } td { (summary_state(m)) }
                             td { (text(m, "method")) " " (ts(m, "refreshed_at")) } }
                    }
                    @if all.is_empty() { tr { td colspan="6" { "No summary: the worker defines the built-in ones as memories arrive; memory_summary_define adds one." } } }
                }
            } }
        },
    )
}

/// One summary: its answer, the memories it rests on, and every version.
pub fn summary(s: &Session, v: &Value) -> Response {
    let m = &v["summary"];
    let empty = vec![];
    let evidence = v["evidence"].as_array().unwrap_or(&empty);
    let versions = v["versions"].as_array().unwrap_or(&empty);
    ok(
        s,
        "summaries",
        &format!("Summary {}", text(m, "name")),
        html! {
            dl {
                dt { "Question" } dd { (text(m, "question")) }
                dt { "Answer" } dd { (text(m, "answer")) }
                dt { "State" } dd { (summary_state(m)) ", version " (json_inline(&m["version"])) ", " (text(m, "method")) " " (ts(m, "refreshed_at")) }
                dt { "Scope" } dd { code { (json_inline(&m["scope"])) } }
                @if !text(m, "error").is_empty() { dt { "Last error" } dd { (text(m, "error")) } }
            }
            h2 { "What the answer rests on" }
            ul {
                @for e in evidence {
                    li { a href=(format!("/inspect/memories/{}", text(e, "id"))) { (short(text(e, "id"))) } " " (text(e, "text"))
                         @if text(e, "state") != "active" { " (" (text(e, "state")) ")" } }
                }
                @if evidence.is_empty() { li { "No memory." } }
            }
            h2 { "Versions" }
            div.scroll { table {
                thead { tr { th scope="col" { "Version" } th scope="col" { "Answer" } th scope="col" { "Memories" } th scope="col" { "Written" } } }
                tbody {
                    @for x in versions {
                        tr { td.num { (json_inline(&x["version"])) }
                             td { @if x["erased"].as_bool() == Some(true) { em { "erased: a memory it rested on was forgotten" } } @else { (text(x, "answer")) } }
                             td.num { (json_inline(&x["evidence"])) } td { (text(x, "method")) " " (ts(x, "created_at")) } }
                    }
                    @if versions.is_empty() { tr { td colspan="4" { "No version yet." } } }
                }
            } }
        },
    )
}

/// The tenant's webhooks: each one's place in the change feed and its dead letters.
pub fn webhooks(s: &Session, v: &Value) -> Response {
    let empty = vec![];
    let cursors = v["cursors"].as_array().unwrap_or(&empty);
    let dead = v["dead"].as_array().unwrap_or(&empty);
    ok(
        s,
        "webhooks",
        "Webhooks",
        html! {
            p.hint { "The gateway posts this tenant's changes to the webhooks of its configuration, signed, at least once; a post that fails every attempt is a dead letter (docs/mcp.md \"Webhooks\")." }
            h2 { "Where each webhook has got to" }
            div.scroll { table {
                thead { tr { th scope="col" { "Webhook" } th scope="col" { "Cursor" } th scope="col" { "Moved" } } }
                tbody {
                    @for c in cursors { tr { td { code { (text(c, "hook")) } } td { code { (text(c, "cursor")) } } td { (ts(c, "updated_at")) } } }
                    @if cursors.is_empty() { tr { td colspan="3" { "No webhook has posted for this tenant." } } }
                }
            } }
            h2 { "Dead letters" }
            div.scroll { table {
                thead { tr { th scope="col" { "Webhook" } th scope="col" { "Change" } th scope="col" { "Delivery id" } th scope="col" { "Attempts" } th scope="col" { "Last error" } th scope="col" { "Failed" } } }
                tbody {
                    @for d in dead {
                        tr { td { code { (text(d, "hook")) } } td { (text(d, "type")) } td { code { (text(d, "delivery_id")) } }
                             td { (d["attempts"].as_i64().unwrap_or(0)) } td { (text(d, "last_error")) } td { (ts(d, "failed_at")) } }
                    }
                    @if dead.is_empty() { tr { td colspan="6" { "No dead letter." } } }
                }
            } }
        },
    )
}

pub fn export(s: &Session) -> Response {
    ok(
        s,
        "export",
        "Export",
        html! {
            p { "Everything this tenant has (memory_export): agents, blocks, threads and messages, memories with their relations and history, files, proposals, the store and checkpoints. Vectors are left out; memory_import reads the file back (docs/api.md \"Import\")." }
            p { a.button href="/inspect/export/download" download { "Download the export (JSON)" } }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explain_bar_shows_every_signal_and_adds_up() {
        // One unit for each signal, as memory_query's explain reports them: every one is a
        // segment and a legend entry, and the segments fill the bar.
        let signals: serde_json::Map<String, Value> = SIGNALS
            .iter()
            .map(|s| (s.name.to_string(), Value::from(1.0)))
            .collect();
        let e = serde_json::json!({ "score": SIGNALS.len() as f64, "signals": signals });
        let html = explain_bar(&e).into_string();
        for s in SIGNALS {
            assert!(
                html.contains(&format!("data-signal=\"{}\"", s.name)),
                "{}",
                s.name
            );
            assert!(html.contains(&format!(" {} +1.000", s.name)), "{}", s.name);
        }
        let width: f64 = html
            .split("width=\"")
            .skip(1)
            .map(|w| w.split('"').next().unwrap().parse::<f64>().unwrap())
            .sum();
        assert!((width - 100.0).abs() < 0.1, "{width}");
    }
}
