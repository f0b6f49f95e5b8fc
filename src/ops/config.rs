//! memory_configure's writes (docs/api.md "Categories and allowlists"): a tenant's categories
//! and agent allowlists, replaced atomically (these statements run in the caller's
//! transaction). The document is checked by `memory_core::config`.

use crate::pg::{spi, tenant};
use memory_core::config::Config;
use serde_json::{json, Value};

/// Replaces the tenant's configuration with `cfg`; returns the counts.
pub fn configure(cfg: &Config) -> Value {
    let user = tenant::resolve(cfg.user_id.as_deref());
    spi::run(
        "DELETE FROM memory.categories WHERE user_id = $1",
        &[user.as_str().into()],
        "clearing categories",
    );
    for c in &cfg.categories {
        // A name, stored normalised (`card_4111_...`): its words read apart again.
        crate::ops::screen::identifier("category", &c.name.replace('_', " "));
        spi::run(
            "INSERT INTO memory.categories (user_id, name, context, rag_length, custom, screen) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                user.as_str().into(),
                c.name.as_str().into(),
                c.context.as_str().into(),
                c.rag_length.into(),
                c.custom.into(),
                c.screen.clone().map(pgrx::JsonB).into(),
            ],
            "storing a category",
        );
    }
    for (agent, cat) in &cfg.allowlists {
        spi::run(
            "INSERT INTO memory.allowlists (user_id, agent, category) VALUES ($1, $2, $3)",
            &[
                user.as_str().into(),
                agent.as_str().into(),
                cat.as_str().into(),
            ],
            "storing an allowlist",
        );
    }
    json!({ "user_id": user, "categories": cfg.categories.len(), "allowlists": cfg.agents() })
}
