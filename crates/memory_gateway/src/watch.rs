//! Resource subscriptions (docs/mcp.md "Subscriptions"): a client subscribed to
//! `memory://core-blocks` gets `notifications/resources/updated` when its agent's blocks change,
//! whoever changed them (another client, an application's SQL, a member of a space whose block
//! the agent has attached); one subscribed to `memory://threads/<id>` when that thread's
//! context changes (a message appended, a compaction).
//!
//! # How changes are found
//! One connection of the gateway LISTENs on the extension's channel `memory_ext_changes`, whose
//! notifications carry the changed owner's tag and nothing else (sql/changes.sql). Each
//! subscription knows the tags its tenant may read (memory_changes' `tags`: its own, and its
//! spaces'); on a notification with one of them, the gateway reads the agent's blocks' hash
//! (`compile_blocks`, no clock in it), or the thread's context text, as the tenant and notifies
//! when it differs from the one it had. A change of a memory or a message does not disturb a
//! block subscriber; a change of another thread does not disturb a thread's.
//!
//! Both ways MCP has of subscribing are served: `resources/subscribe` (protocol versions before
//! 2026-07-28) and `subscriptions/listen` (2026-07-28).

use crate::config::Tenant;
use crate::db::Db;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, SubscriptionSink};
use rmcp::RoleServer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Where a subscriber's notifications go.
#[derive(Clone)]
pub enum Target {
    /// `resources/subscribe`: a plain notification to the client.
    Legacy(Peer<RoleServer>),
    /// `subscriptions/listen`: on the listen request's stream.
    Listen(SubscriptionSink),
}

struct Sub {
    id: u64,
    tenant: Tenant,
    uri: String,
    tags: Vec<String>,
    hash: Option<String>,
    target: Target,
}

pub struct Watch {
    db: Arc<Db>,
    subs: Mutex<Vec<Sub>>,
    /// Woken on a notification of one of their tags: the webhooks (src/webhook.rs).
    wakers: Mutex<Vec<(Vec<String>, Arc<tokio::sync::Notify>)>>,
    next: AtomicU64,
    started: OnceLock<()>,
}

static WATCH: OnceLock<Arc<Watch>> = OnceLock::new();

/// The process's watcher (one Db per process), its listening task started on first use.
pub fn global(db: &Arc<Db>) -> Arc<Watch> {
    let w = WATCH
        .get_or_init(|| {
            Arc::new(Watch {
                db: db.clone(),
                subs: Mutex::new(vec![]),
                wakers: Mutex::new(vec![]),
                next: AtomicU64::new(1),
                started: OnceLock::new(),
            })
        })
        .clone();
    w.start();
    w
}

/// A subscription's hash of what it watches: the agent's blocks as compile_blocks hashes them,
/// or a thread's context (`memory://threads/<id>`).
async fn hash(db: &Db, t: &Tenant, uri: &str) -> Option<String> {
    db.resource_hash(t, crate::gateway::thread_of(uri)).await
}

impl Watch {
    /// Registers a subscription of `tenant` to `uri`; its id, to remove it with.
    pub async fn add(&self, tenant: &Tenant, uri: &str, target: Target) -> Result<u64, String> {
        let tags = self
            .db
            .tags(&tenant.user_id)
            .await
            .map_err(|e| e.to_string())?;
        let hash = hash(&self.db, tenant, uri).await;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.subs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Sub {
                id,
                tenant: tenant.clone(),
                uri: uri.to_string(),
                tags,
                hash,
                target,
            });
        crate::metrics::global().inc("memory_mcp_subscriptions_total", &[]);
        Ok(id)
    }

    /// Wakes `wake` on every notification carrying one of `tags`.
    pub fn on_change(&self, tags: Vec<String>, wake: Arc<tokio::sync::Notify>) {
        self.wakers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((tags, wake));
    }

    pub fn remove(&self, id: u64) {
        self.subs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|s| s.id != id);
    }

    fn start(self: &Arc<Self>) {
        if self.started.set(()).is_err() {
            return;
        }
        let w = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = w.listen().await {
                    eprintln!("memory-mcp: change notifications: {e}; listening again in 1 s");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    /// LISTENs until the connection fails; every notification checks the subscribers of its
    /// owner.
    async fn listen(self: &Arc<Self>) -> Result<(), String> {
        let (client, mut conn) = self.db.dedicated().await?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|cx| conn.poll_message(cx)).await {
                    Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                        if tx.send(n.payload().to_string()).is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => return,
                }
            }
        });
        client
            .batch_execute("LISTEN memory_ext_changes")
            .await
            .map_err(|e| e.to_string())?;
        // A change made while the gateway was not listening: every subscriber checks once.
        self.changed(None).await;
        while let Some(payload) = rx.recv().await {
            let owner = serde_json::from_str::<serde_json::Value>(&payload)
                .ok()
                .and_then(|v| v["owner"].as_str().map(str::to_string));
            if let Some(owner) = owner {
                self.changed(Some(&owner)).await;
            }
        }
        Err("the listening connection closed".into())
    }

    /// Checks the subscribers that read `owner` (all when None) and notifies those whose
    /// resource changed. A subscriber whose client is gone is dropped.
    async fn changed(&self, owner: Option<&str>) {
        for (tags, wake) in self.wakers.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            if owner.is_none_or(|o| tags.iter().any(|t| t == o)) {
                wake.notify_one();
            }
        }
        let due: Vec<(u64, Tenant, String, Option<String>)> = self
            .subs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|s| owner.is_none_or(|o| s.tags.iter().any(|t| t == o)))
            .map(|s| (s.id, s.tenant.clone(), s.uri.clone(), s.hash.clone()))
            .collect();
        for (id, tenant, uri, before) in due {
            let now = hash(&self.db, &tenant, &uri).await;
            if now.is_none() || now == before {
                continue;
            }
            let target = {
                let mut subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
                let Some(s) = subs.iter_mut().find(|s| s.id == id) else {
                    continue;
                };
                s.hash = now;
                (s.target.clone(), s.uri.clone())
            };
            let sent = match &target.0 {
                Target::Legacy(peer) => peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(&target.1))
                    .await
                    .is_ok(),
                Target::Listen(sink) => sink.notify_resource_updated(&target.1).await.is_ok(),
            };
            let m = crate::metrics::global();
            if sent {
                m.inc(
                    "memory_mcp_notifications_total",
                    &[("kind", "resources_updated")],
                );
            } else {
                self.remove(id);
            }
        }
    }
}
