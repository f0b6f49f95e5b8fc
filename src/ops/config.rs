//! memory_configure's writes (docs/api.md "Categories and allowlists", "Languages"): a tenant's
//! categories and agent allowlists, replaced atomically (these statements run in the caller's
//! transaction), and its default language. The document is checked by `memory_core::config`.

use crate::pg::{spi, tenant};
use memory_core::config::Config;
use serde_json::{json, Value};

/// Replaces the tenant's configuration with `cfg`; returns the counts.
pub fn configure(cfg: &Config) -> Value {
    let user = tenant::resolve(cfg.user_id.as_deref());
    if let Some(language) = &cfg.language {
        spi::run(
            "INSERT INTO memory.settings AS s (user_id, language) VALUES ($1, $2)
             ON CONFLICT (user_id) DO UPDATE SET language = EXCLUDED.language",
            &[user.as_str().into(), language.clone().into()],
            "storing the default language",
        );
    }
    let language = spi::one_opt::<String>(
        "SELECT language FROM memory.settings WHERE user_id = $1",
        &[user.as_str().into()],
        "reading the default language",
    );
    if cfg.language_only {
        return json!({ "user_id": user, "language": language });
    }
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
    let mut answer =
        json!({ "user_id": user, "categories": cfg.categories.len(), "allowlists": cfg.agents() });
    // Named when there is one: answers of tenants without a default read as before 0.13.0.
    if let Some(l) = language {
        answer["language"] = json!(l);
    }
    answer
}
