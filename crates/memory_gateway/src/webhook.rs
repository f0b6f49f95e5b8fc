//! Webhooks (docs/mcp.md "Webhooks"): a token's tenant's changes, posted to the URLs its entry
//! of the configuration gives, signed, at least once, in feed order.
//!
//! # How
//! Each webhook is a task that follows its tenant's change feed (`memory_changes`, the
//! extension's cursor, which never skips or repeats a change) from where it got to, kept in
//! `memory.webhook_cursors` (a new webhook starts at the end of the feed: `since => 'now'`). It
//! wakes on the tenant's `NOTIFY memory_ext_changes` (src/watch.rs) and every few seconds. Each
//! change it wants is posted until the receiver answers 2xx, with exponential backoff between
//! attempts (`limits.webhook_backoff_ms`, doubled each time); after `limits.webhook_attempts`
//! it goes to the dead letters (`memory.webhook_dead`) and the webhook goes on. The cursor moves
//! after each batch, so a gateway stopped in the middle posts the batch again: a receiver drops
//! what it has seen by the delivery id, which is the same on every attempt and every repost.
//!
//! # Signature
//! As Stripe signs: header `Memory-Ext-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
//! "<t>.<body>" with the webhook's secret>`. The receiver recomputes it, compares in constant
//! time and refuses a `t` too far from its clock (replays).

use crate::config::{Limits, Webhook};
use crate::db::{Db, DbError};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Changes read from the feed at a time.
const BATCH: i32 = 100;
/// How often a webhook looks at its feed without a notification (a missed one, Citus).
const TICK: Duration = Duration::from_secs(5);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Starts one task per webhook.
pub fn start(db: Arc<Db>, hooks: Vec<Webhook>, limits: &Limits) {
    for hook in hooks {
        let (db, limits) = (db.clone(), limits.clone());
        tokio::spawn(async move { run(db, hook, limits).await });
    }
}

/// A webhook's name in its tables: the first 16 hex digits of its URL's SHA-256.
pub fn key(url: &str) -> String {
    hex(&Sha256::digest(url.as_bytes()))[..16].to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
pub fn signature(secret: &str, t: u64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex(&mac.finalize().into_bytes()))
}

async fn run(db: Arc<Db>, hook: Webhook, limits: Limits) {
    let key = key(&hook.url);
    let wake = Arc::new(tokio::sync::Notify::new());
    // The tags the tenant's notifications carry (its own and its spaces').
    loop {
        match db.tags(&hook.tenant.user_id).await {
            Ok(tags) => {
                crate::watch::global(&db).on_change(tags, wake.clone());
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
    let agent = post_agent(limits.webhook_timeout_ms);
    loop {
        if let Err(e) = drain(&db, &hook, &key, &limits, &agent).await {
            eprintln!(
                "memory-mcp: webhook {key} of \"{}\": {e}",
                hook.tenant.user_id
            );
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(TICK) => {}
        }
    }
}

/// The HTTP client of every post, configured as memory_providers' `post::agent` (which the
/// gateway does not link: that crate brings the models).
fn post_agent(timeout_ms: u64) -> ureq::Agent {
    let t = Some(Duration::from_millis(timeout_ms.max(1)));
    ureq::Agent::config_builder()
        .timeout_global(t)
        .timeout_connect(t)
        .http_status_as_error(false)
        // A receiver that redirects is not followed: it could point anywhere.
        .max_redirects(0)
        .build()
        .into()
}

/// The webhook's cursor: the one kept, or (a new webhook, or a feed restored elsewhere since)
/// the end of the feed now.
async fn cursor(db: &Db, hook: &Webhook, key: &str, fresh: bool) -> Result<String, DbError> {
    let user = &hook.tenant.user_id;
    if !fresh {
        if let Some(c) = db
            .text(
                user,
                "",
                "SELECT cursor FROM memory.webhook_cursors WHERE user_id = current_setting('memory_ext.user_id') AND hook = $1",
                &[&key],
            )
            .await?
        {
            return Ok(c);
        }
    }
    let now = db
        .text(user, "", "SELECT memory_changes('now') ->> 'cursor'", &[])
        .await?
        .unwrap_or_default();
    save(db, hook, key, &now).await?;
    Ok(now)
}

async fn save(db: &Db, hook: &Webhook, key: &str, cursor: &str) -> Result<(), DbError> {
    db.text(
        &hook.tenant.user_id,
        "",
        "INSERT INTO memory.webhook_cursors (user_id, hook, cursor)
         VALUES (current_setting('memory_ext.user_id'), $1, $2)
         ON CONFLICT (user_id, hook) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = now()
         RETURNING cursor",
        &[&key, &cursor],
    )
    .await
    .map(|_| ())
}

/// Posts every change after the cursor, batch by batch, until the feed is read.
async fn drain(
    db: &Db,
    hook: &Webhook,
    key: &str,
    limits: &Limits,
    agent: &ureq::Agent,
) -> Result<(), String> {
    let mut at = cursor(db, hook, key, false)
        .await
        .map_err(|e| e.to_string())?;
    loop {
        let read = db
            .json(
                &hook.tenant.user_id,
                "",
                "SELECT memory_changes($1, $2)::text",
                &[&at, &BATCH],
            )
            .await;
        let page = match read {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(()),
            // A cursor of another feed (the database was restored): start again at its end,
            // and say so; what changed in between was not posted.
            Err(DbError::Sql { code, message }) if code == "22023" => {
                eprintln!("memory-mcp: webhook {key}: {message}; starting at the end of the feed");
                at = cursor(db, hook, key, true)
                    .await
                    .map_err(|e| e.to_string())?;
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        let changes = page["changes"].as_array().cloned().unwrap_or_default();
        let next = page["cursor"].as_str().unwrap_or(&at).to_string();
        for c in &changes {
            let entity = c["entity"].as_str().unwrap_or_default();
            if hook
                .events
                .as_ref()
                .is_none_or(|e| e.iter().any(|x| x == entity))
            {
                deliver(db, hook, key, limits, agent, c).await?;
            }
        }
        save(db, hook, key, &next)
            .await
            .map_err(|e| e.to_string())?;
        if changes.len() < BATCH as usize {
            return Ok(());
        }
        at = next;
    }
}

/// One change posted until the receiver takes it or the attempts run out (then a dead letter).
async fn deliver(
    db: &Db,
    hook: &Webhook,
    key: &str,
    limits: &Limits,
    agent: &ureq::Agent,
    change: &Value,
) -> Result<(), String> {
    let id = hex(&Sha256::digest(
        format!("{}|{key}|{change}", hook.tenant.user_id).as_bytes(),
    ))[..32]
        .to_string();
    let kind = format!(
        "{}.{}",
        change["entity"].as_str().unwrap_or_default(),
        change["op"].as_str().unwrap_or_default()
    );
    let body = json!({ "id": id, "type": kind, "data": change }).to_string();
    let m = crate::metrics::global();
    let mut wait = Duration::from_millis(limits.webhook_backoff_ms);
    let mut last_error = String::new();
    for attempt in 1..=limits.webhook_attempts {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let signed = signature(&hook.secret, t, &body);
        let (agent, url, body_, id_) = (agent.clone(), hook.url.clone(), body.clone(), id.clone());
        let sent = tokio::task::spawn_blocking(move || {
            agent
                .post(&url)
                .header("Content-Type", "application/json")
                .header(
                    "User-Agent",
                    concat!("memory-mcp/", env!("CARGO_PKG_VERSION")),
                )
                .header("Memory-Ext-Webhook-Id", &id_)
                .header("Memory-Ext-Signature", &signed)
                .send(&body_)
                .map(|r| r.status().as_u16())
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())?;
        match sent {
            Ok(status) if (200..300).contains(&status) => {
                m.inc("memory_mcp_webhook_posts_total", &[("result", "delivered")]);
                return Ok(());
            }
            Ok(status) => last_error = format!("HTTP {status}"),
            Err(e) => last_error = e,
        }
        m.inc("memory_mcp_webhook_posts_total", &[("result", "failed")]);
        if attempt < limits.webhook_attempts {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(MAX_BACKOFF);
        }
    }
    m.inc(
        "memory_mcp_webhook_posts_total",
        &[("result", "dead_letter")],
    );
    db.text(
        &hook.tenant.user_id,
        "",
        "INSERT INTO memory.webhook_dead (user_id, hook, delivery_id, body, attempts, last_error)
         VALUES (current_setting('memory_ext.user_id'), $1, $2, $3::text::jsonb, $4, $5)
         RETURNING id::text",
        &[
            &key,
            &id,
            &body,
            &(limits.webhook_attempts as i32),
            &last_error,
        ],
    )
    .await
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_as_stripe_does() {
        // HMAC-SHA256("whsec_0123456789abcdef", "1700000000.{}"), computed with Python's hmac.
        let s = signature("whsec_0123456789abcdef", 1_700_000_000, "{}");
        assert_eq!(
            s,
            "t=1700000000,v1=d0c329a0542d1a8e66b0b5503cf2d2f8f8e174c98224b843c11f74ea14c341e9"
        );
        assert_ne!(s, signature("whsec_0123456789abcdeg", 1_700_000_000, "{}"));
        assert_eq!(key("http://127.0.0.1:9/x").len(), 16);
    }
}
