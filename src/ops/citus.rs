//! Citus (docs/citus.md): `memory_citus_distribute` shards the extension's tables by `user_id`
//! on a coordinator. Everything else runs unchanged on a cluster; what had to change for Citus
//! changed for plain Postgres alike.

use crate::embed::{self, write};
use crate::error::raise;
use crate::pg::{citus, spi};
use memory_core::SqlState;
use serde_json::{json, Value};

/// Distributes every tenant table colocated by `user_id` and makes the registry a reference
/// table (those already done are left as they are, so running it again only adds what a newer
/// release created), rows already written included, then registers the active embedding model
/// and makes every registered model's HNSW indexes that are missing. Registering needs DDL (its
/// HNSW indexes), which Citus cannot mix into a tenant's write, hence here, ahead of any write.
pub fn distribute() -> Value {
    if !citus::present() {
        raise(
            SqlState::FeatureNotSupported,
            "memory_citus_distribute needs the citus extension in this database",
            Some("CREATE EXTENSION citus first, on a Citus coordinator (docs/citus.md)".into()),
        );
    }
    if !spi::one_opt::<bool>(
        "SELECT citus_is_coordinator()",
        &[],
        "asking Citus for the coordinator",
    )
    .unwrap_or(false)
    {
        raise(
            SqlState::FeatureNotSupported,
            "memory_citus_distribute runs on the Citus coordinator",
            Some("register this node as the coordinator (citus_set_coordinator_host) or connect to it".into()),
        );
    }
    let reference = names(
        include_str!("../../sql/queries/citus_reference.sql"),
        "listing the tables to make reference tables",
    );
    // A reference table that a foreign key joins (the grants to their spaces) can only be
    // written over one connection per node in a transaction that also changes distributed
    // tables (the policies, columns and triggers below, on a cluster upgraded from 0.12.0):
    // the whole call runs that way when it makes them. A one-time call; its DDL is slower so.
    if reference
        .iter()
        .any(|t| t == "memory.spaces" || t == "memory.grants")
    {
        spi::run(
            "SELECT set_config('citus.multi_shard_modify_mode', 'sequential', true)",
            &[],
            "running over one connection per node",
        );
    }
    // Custom plans for the trigger functions on this node too (sql/citus.sql says why; the
    // install script did it already unless memory_ext was here before citus).
    spi::run(
        "SELECT memory._citus_trigger_plans()",
        &[],
        "planning trigger statements per call",
    );
    // The extension's tables keep their triggers (audit, revisions, statistics): each runs on
    // the shard, on the tenant's rows only (docs/citus.md says why that is safe here).
    spi::run(
        "SELECT set_config('citus.enable_unsafe_triggers', 'on', true)",
        &[],
        "allowing triggers on distributed tables",
    );
    // A cluster upgraded from 0.12.0 gets its full-text columns by language here, once every
    // node has the functions they call (sql/citus.sql `memory._language_columns`).
    spi::run(
        "SELECT memory._language_columns()",
        &[],
        "making the full-text columns by language",
    );
    // And history's member naming (sql/spaces.sql `memory._space_triggers`) and the spaces'
    // row policies (sql/security.sql `memory._space_policies`); the change feed's triggers
    // once the tables are distributed (below).
    spi::run(
        "SELECT memory._space_triggers(), memory._space_policies()",
        &[],
        "making the spaces' triggers and policies",
    );
    let tables = names(
        include_str!("../../sql/queries/citus_tables.sql"),
        "listing the tables to distribute",
    );
    // Citus copies a table's rows into its shards as inserts, which fire the shards'
    // triggers: the change feed's would record every copied row again as a change, under a
    // worker's transaction id (which may be one the coordinator's rows already carry: a
    // duplicate key). Its triggers are dropped while their tables are distributed and made
    // again afterwards (sql/changes.sql `memory._change_triggers`).
    let feeds = ["memory.history", "memory.messages", "memory.proposals"];
    if tables.iter().any(|t| feeds.contains(&t.as_str())) {
        for (trigger, table) in [
            ("history_change", "memory.history"),
            ("messages_change", "memory.messages"),
            ("proposals_change", "memory.proposals"),
        ] {
            // Making it again on the distributed table makes it on every node.
            on_every_node(
                &format!("DROP TRIGGER IF EXISTS {trigger} ON {table}"),
                "setting the change feed's triggers aside",
            );
        }
    }
    let all: Vec<&String> = reference.iter().chain(&tables).collect();
    if !all.is_empty() {
        // Every table at once, before any of them is touched: distributing one while a writer
        // (the background worker, an application) holds another and then reaches for the first
        // was a distributed deadlock in a test. Writes wait until the commit; reads go on. The
        // names come from the catalog, quoted there (sql/queries/citus_tables.sql).
        let names: Vec<&str> = all.iter().map(|t| t.as_str()).collect();
        spi::run(
            &format!("LOCK TABLE {} IN EXCLUSIVE MODE", names.join(", ")),
            &[],
            "locking the tables to distribute",
        );
    }
    // Citus's notices per table (the copy of local rows, and a hint to empty the coordinator's
    // copy, which is done below) are not the caller's business.
    spi::with_settings(&[(c"client_min_messages", c"warning")], || {
        // A local table's foreign key to a table being made a reference table makes Citus
        // convert the local table itself, which fails on the workers, where the extension made
        // the table already ("relation grants already exists"): a grant's key to its space is
        // dropped, here and on the workers' copies, while both become reference tables, and
        // made again between the two of them (Citus then makes it on every node).
        let regrant = reference.iter().any(|t| t == "memory.grants");
        if regrant {
            on_every_node(
                "ALTER TABLE memory.grants DROP CONSTRAINT IF EXISTS grants_space_fkey",
                "setting a grant's key to its space aside",
            );
        }
        for t in &reference {
            spi::run(
                "SELECT create_reference_table($1)",
                &[t.as_str().into()],
                "making a reference table",
            );
        }
        if regrant {
            spi::run(
                "ALTER TABLE memory.grants ADD CONSTRAINT grants_space_fkey
                 FOREIGN KEY (space) REFERENCES memory.spaces (name) ON DELETE CASCADE",
                &[],
                "making a grant's key to its space again",
            );
        }
        for t in &tables {
            let colocate = if t == "memory.items" {
                "default"
            } else {
                "memory.items"
            };
            spi::run(
                "SELECT create_distributed_table($1, 'user_id', colocate_with => $2)",
                &[t.as_str().into(), colocate.into()],
                "distributing a table",
            );
        }
        // Rows written before distributing (a one-node install adopting Citus) were copied into
        // the shards; the coordinator's own copy is unreachable from now on, but pg_dump of the
        // coordinator would still carry it. Citus's function empties it, in this transaction.
        for t in &all {
            spi::run(
                "SELECT truncate_local_data_after_distributing_table($1)",
                &[t.as_str().into()],
                "emptying the coordinator's copy of a distributed table",
            );
        }
    });
    spi::run(
        "SELECT memory._change_triggers()",
        &[],
        "making the change feed's triggers",
    );
    // The forms that take their tenant as an argument, so that Citus runs a call of one of them
    // wholly on that tenant's worker (src/pg/citus.rs `routed`).
    let routed = names(
        include_str!("../../sql/queries/citus_functions.sql"),
        "listing the functions to distribute",
    );
    for f in &routed {
        spi::run(
            "SELECT create_distributed_function($1::regprocedure, 'user_id', colocate_with => 'memory.items')",
            &[f.as_str().into()],
            "distributing a function by its tenant",
        );
    }
    let model = register_active_model();
    let models = spi::rows(
        include_str!("../../sql/queries/citus_model_indexes.sql"),
        &[],
        "listing the registered models",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<i32>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
            ))
        },
    );
    for (id, dims, typ) in models {
        spi::run(
            "SELECT memory._create_model_indexes($1, $2, $3)",
            &[id.as_str().into(), dims.into(), typ.into()],
            "creating a model's HNSW indexes",
        );
    }
    json!({"distributed": tables, "reference": reference, "functions": routed, "model": model})
}

/// Registers the active model (its dimensions from the settings, or from one probe embedding);
/// its id, or null when the provider is not reachable now (then run this again before tenants
/// write: docs/citus.md).
fn register_active_model() -> Option<String> {
    let model = embed::active_model().ok()?;
    let dims = match model.known_dims() {
        Some(d) => d,
        None => embed::embed(&["memory_ext"]).ok()?.1.pop()?.len(),
    };
    write::ensure_model(&model, dims).ok()?;
    Some(model.id)
}

/// Runs `sql` here and on every worker: on a table the extension made on each node before it
/// was distributed, a change made on the coordinator alone leaves the workers' copies as they
/// were, and Citus's own later change of the distributed table then meets them.
fn on_every_node(sql: &str, what: &str) {
    spi::run(sql, &[], what);
    spi::run("SELECT run_command_on_workers($1)", &[sql.into()], what);
}

/// The first column of every row of `query`, as text.
fn names(query: &str, what: &str) -> Vec<String> {
    spi::rows(query, &[], what, |r| {
        Ok(r.get::<String>(1)?.unwrap_or_default())
    })
}
