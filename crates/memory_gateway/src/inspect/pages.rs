//! The inspector's pages and actions: each reads its request, runs one statement of
//! src/inspect/sql/ for the session's tenant, and renders src/inspect/views.rs. An action
//! answers with a redirect to the page it changed (post/redirect/get), so a reload does not
//! repeat it; the page then shows the change and a one-line notice of what was done.

use super::params::{urlencode, MemoryFilters, PAGE_SIZE};
use super::{db_error, views, Inspector, Session};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

type App = State<Arc<Inspector>>;

macro_rules! sql {
    ($name:literal) => {
        include_str!(concat!("sql/", $name, ".sql"))
    };
}

fn redirect(to: &str, notice: &str) -> Response {
    let sep = if to.contains('?') { '&' } else { '?' };
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("{to}{sep}notice={}", urlencode(notice))) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

fn opt(s: Option<&String>) -> Option<String> {
    s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn notice(q: &HashMap<String, String>) -> Option<String> {
    opt(q.get("notice"))
}

fn missing(s: &Session, what: &str) -> Response {
    views::error_page(
        StatusCode::NOT_FOUND,
        &format!("There is no such {what} for this tenant."),
        Some(s),
    )
}

pub async fn overview(
    State(app): App,
    Extension(s): Extension<Session>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match app.sql(&s, sql!("overview"), &[]).await {
        Ok(Some(v)) => views::overview(&s, &v, notice(&q).as_deref()),
        Ok(None) => missing(&s, "tenant"),
        Err(e) => db_error(&e, &s),
    }
}

fn some(s: &str) -> Option<String> {
    Some(s.trim()).filter(|v| !v.is_empty()).map(String::from)
}

pub async fn memories(
    State(app): App,
    Extension(s): Extension<Session>,
    Query(f): Query<MemoryFilters>,
) -> Response {
    let tags: Option<Vec<String>> = some(&f.tags).map(|t| {
        t.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    });
    if let Some(query) = some(&f.q) {
        // The agent's own search: memory_query with every signal explained.
        let mut filters = serde_json::Map::new();
        for (k, v) in [
            ("kind", some(&f.kind)),
            ("category", some(&f.category)),
            ("actor_id", some(&f.actor)),
            ("updated_after", some(&f.from)),
            ("updated_before", some(&f.to)),
        ] {
            if let Some(v) = v {
                filters.insert(k.into(), Value::String(v));
            }
        }
        if let Some(t) = &tags {
            filters.insert("tags".into(), json!(t));
        }
        let request = json!({
            "query": query, "top_k": 20, "return": "full", "explain": true,
            "filters": filters,
            "include_superseded": f.state == "superseded",
        });
        let r = app
            .sql(&s, sql!("memories_query"), &[Some(request.to_string())])
            .await;
        return match r {
            Ok(Some(v)) => views::memories_search(&s, &f, &v),
            Ok(None) => missing(&s, "tenant"),
            Err(e) => views::memories_refused(&s, &f, &e),
        };
    }
    let page: i64 = f.page.parse().unwrap_or(0).max(0);
    let params = [
        some(&f.kind),
        some(&f.category),
        some(&f.state),
        some(&f.from),
        some(&f.to),
        some(&f.actor),
        some(&f.thread),
    ];
    // The tags go as an array: the one parameter that is not text.
    let limit = Some((PAGE_SIZE + 1).to_string());
    let offset = Some((page * PAGE_SIZE).to_string());
    let mut all: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![];
    for p in &params {
        all.push(p);
    }
    all.push(&tags);
    all.push(&limit);
    all.push(&offset);
    match app.sql_with(&s, sql!("memories_list"), &all).await {
        Ok(v) => views::memories_list(&s, &f, &v.unwrap_or(json!([])), page),
        Err(e) => views::memories_refused(&s, &f, &e),
    }
}

pub async fn memory(
    State(app): App,
    Extension(s): Extension<Session>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match app.sql(&s, sql!("memory_page"), &[Some(id)]).await {
        Ok(Some(v)) => views::memory(&s, &v, notice(&q).as_deref()),
        Ok(None) => missing(&s, "memory"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn memory_action(
    State(app): App,
    Extension(s): Extension<Session>,
    Path((id, action)): Path<(String, String)>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let g = |k: &str| form.get(k).cloned();
    let (sql, params, done): (&str, Vec<Option<String>>, &str) = match action.as_str() {
        "edit" => (
            sql!("memory_edit"),
            vec![
                Some(id.clone()),
                g("text"),
                Some(g("category").unwrap_or_default()),
                g("importance"),
                Some(g("tags").unwrap_or_default()),
                Some(
                    if form.contains_key("pinned") {
                        "true"
                    } else {
                        "false"
                    }
                    .into(),
                ),
            ],
            "Saved.",
        ),
        "forget" => (
            sql!("memory_forget"),
            vec![Some(id.clone())],
            "Forgotten: it can be restored until it is purged.",
        ),
        "restore" => (sql!("memory_restore"), vec![Some(id.clone())], "Restored."),
        "supersede" => (
            sql!("memory_supersede"),
            vec![Some(id.clone()), g("text")],
            "Superseded by the new memory.",
        ),
        _ => return missing(&s, "action"),
    };
    match app.sql(&s, sql, &params).await {
        Ok(Some(v)) => {
            // A supersede's page is the new memory's.
            let to = match (action.as_str(), v.get("id").and_then(Value::as_str)) {
                ("supersede", Some(new)) => new.to_string(),
                _ => id,
            };
            redirect(&format!("/inspect/memories/{}", urlencode(&to)), done)
        }
        Ok(None) => missing(&s, "memory"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn agents(State(app): App, Extension(s): Extension<Session>) -> Response {
    match app.sql(&s, sql!("blocks_agents"), &[]).await {
        Ok(v) => views::agents(&s, &v.unwrap_or(json!([]))),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn blocks(
    State(app): App,
    Extension(s): Extension<Session>,
    Path(agent): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match app.sql(&s, sql!("blocks_agent"), &[Some(agent)]).await {
        Ok(Some(v)) => views::blocks(&s, &v, notice(&q).as_deref()),
        Ok(None) => missing(&s, "agent"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn block_history(
    State(app): App,
    Extension(s): Extension<Session>,
    Path((agent, label)): Path<(String, String)>,
) -> Response {
    match app
        .sql(
            &s,
            sql!("blocks_history"),
            &[Some(agent.clone()), Some(label)],
        )
        .await
    {
        Ok(Some(v)) => views::block_history(&s, &agent, &v),
        Ok(None) => missing(&s, "block"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn block_edit(
    State(app): App,
    Extension(s): Extension<Session>,
    Path((agent, label)): Path<(String, String)>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    // Browsers send a textarea's line breaks as CR LF; the block keeps what was typed.
    let value = form.get("value").map(|v| v.replace("\r\n", "\n"));
    let r = app
        .sql(
            &s,
            sql!("blocks_set"),
            &[
                Some(agent.clone()),
                Some(label.clone()),
                value,
                form.get("version").cloned(),
            ],
        )
        .await;
    let page = format!("/inspect/blocks/{}", urlencode(&agent));
    match r {
        Ok(Some(_)) => redirect(&page, &format!("Saved block {label}.")),
        Ok(None) => views::error_page(
            StatusCode::CONFLICT,
            &format!("Block {label} changed since the page was loaded (or does not exist): reload it and edit again."),
            Some(&s),
        ),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn threads(State(app): App, Extension(s): Extension<Session>) -> Response {
    match app
        .sql(&s, sql!("threads_list"), &[Some("200".into())])
        .await
    {
        Ok(v) => views::threads(&s, &v.unwrap_or(json!([]))),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn thread(
    State(app): App,
    Extension(s): Extension<Session>,
    Path(thread): Path<String>,
) -> Response {
    match app
        .sql(
            &s,
            sql!("threads_page"),
            &[Some(thread), Some("500".into())],
        )
        .await
    {
        Ok(Some(v)) => views::thread(&s, &v),
        Ok(None) => missing(&s, "thread"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn files(
    State(app): App,
    Extension(s): Extension<Session>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let (prefix, search, grep) = (opt(q.get("prefix")), opt(q.get("q")), opt(q.get("grep")));
    match app
        .sql(
            &s,
            sql!("files_list"),
            &[prefix.clone(), search.clone(), grep.clone()],
        )
        .await
    {
        Ok(v) => views::files(&s, &v.unwrap_or(json!({})), &prefix, &search, &grep),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn file(
    State(app): App,
    Extension(s): Extension<Session>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(path) = q.get("path").cloned() else {
        return missing(&s, "file");
    };
    match app.sql(&s, sql!("files_view"), &[Some(path)]).await {
        Ok(Some(v)) => views::file(&s, &v),
        Ok(None) => missing(&s, "file"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn proposals(
    State(app): App,
    Extension(s): Extension<Session>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match app.sql(&s, sql!("proposals_list"), &[]).await {
        Ok(v) => views::proposals(&s, &v.unwrap_or(json!([])), notice(&q).as_deref()),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn summaries(State(app): App, Extension(s): Extension<Session>) -> Response {
    match app.sql(&s, sql!("summaries_list"), &[]).await {
        Ok(v) => views::summaries(&s, &v.unwrap_or(json!([]))),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn summary(
    State(app): App,
    Extension(s): Extension<Session>,
    Path(name): Path<String>,
) -> Response {
    match app.sql(&s, sql!("summaries_page"), &[Some(name)]).await {
        Ok(Some(v)) => views::summary(&s, &v),
        Ok(None) => missing(&s, "summary"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn webhooks(State(app): App, Extension(s): Extension<Session>) -> Response {
    match app.sql(&s, sql!("webhooks_list"), &[]).await {
        Ok(v) => views::webhooks(&s, &v.unwrap_or(json!({}))),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn decide(
    State(app): App,
    Extension(s): Extension<Session>,
    Path((id, decision)): Path<(String, String)>,
) -> Response {
    if decision != "approve" && decision != "reject" {
        return missing(&s, "decision");
    }
    match app
        .sql(
            &s,
            sql!("proposals_decide"),
            &[Some(id), Some(decision.clone())],
        )
        .await
    {
        Ok(Some(v)) => {
            let done = match v.get("memory_id").and_then(Value::as_str) {
                Some(m) => format!("Approved: memory {m} written."),
                None => format!(
                    "{}.",
                    if decision == "approve" {
                        "Approved"
                    } else {
                        "Rejected"
                    }
                ),
            };
            redirect("/inspect/proposals", &done)
        }
        Ok(None) => missing(&s, "proposal"),
        Err(e) => db_error(&e, &s),
    }
}

pub async fn export_page(Extension(s): Extension<Session>) -> Response {
    views::export(&s)
}

pub async fn export(State(app): App, Extension(s): Extension<Session>) -> Response {
    // memory_export's text as it comes: a large tenant's document is not parsed and written again.
    let tenant = &s.grant.tenant.user_id;
    match app
        .db
        .text(tenant, &s.acting(), sql!("export"), &[tenant])
        .await
    {
        Ok(Some(body)) => {
            let name: String = tenant
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let mut r = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
            if let Ok(h) = HeaderValue::from_str(&format!(
                "attachment; filename=\"memory_ext-export-{name}.json\""
            )) {
                r.headers_mut().insert(header::CONTENT_DISPOSITION, h);
            }
            r
        }
        Ok(None) => missing(&s, "tenant"),
        Err(e) => db_error(&e, &s),
    }
}
