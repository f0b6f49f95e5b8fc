//! Every DDL file of sql/, included from this one place, in the order they depend on each other
//! (pgrx places each in the generated install script after what it `requires`). sql/schema.sql
//! holds the tables; each feature's triggers, functions and views are in its own file
//! (docs/architecture.md "SQL").

use pgrx::prelude::*;

extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!(
    "../sql/triggers.sql",
    name = "triggers",
    requires = ["schema"]
);
// memory_embed and memory_embed_batch wrap these two functions.
extension_sql_file!(
    "../sql/embed.sql",
    name = "embed",
    requires = [
        "schema",
        api::embed::embed_array,
        api::embed::embed_batch_arrays
    ]
);
extension_sql_file!("../sql/search.sql", name = "search", requires = ["schema"]);
extension_sql_file!(
    "../sql/consolidate.sql",
    name = "consolidate",
    requires = ["schema"]
);
extension_sql_file!("../sql/worker.sql", name = "worker", requires = ["schema"]);
extension_sql_file!("../sql/events.sql", name = "events", requires = ["schema"]);
// The checkpoint functions are SQL around these four argument checks.
extension_sql_file!(
    "../sql/checkpoints.sql",
    name = "checkpoints",
    requires = [
        api::checkpoints::resolve_tenant,
        api::checkpoints::checkpoint_thread,
        api::checkpoints::checkpoint_size,
        api::checkpoints::check_json
    ]
);
// conversation_search_date resolves its tenant as the checkpoint functions do.
extension_sql_file!(
    "../sql/recall.sql",
    name = "recall",
    requires = ["schema", api::checkpoints::resolve_tenant]
);
// memory_ref_store names the arguments of memory.ref_store.
extension_sql_file!(
    "../sql/detail.sql",
    name = "detail",
    requires = [api::detail::ref_store]
);
// memory_export_rows: the export as a stream of rows, for tenants whose export exceeds what one
// jsonb value can hold.
extension_sql_file!(
    "../sql/audit.sql",
    name = "audit",
    requires = ["checkpoints"]
);
// memory_proposals resolves its tenant as the checkpoint functions do.
extension_sql_file!(
    "../sql/consent.sql",
    name = "consent",
    requires = ["schema", api::checkpoints::resolve_tenant]
);
// The Citus-only plan setting names trigger functions of triggers.sql, search.sql and store.sql.
extension_sql_file!(
    "../sql/citus.sql",
    name = "citus",
    requires = [
        "triggers",
        "search",
        "store",
        api::citus::memory_citus_distribute
    ]
);

extension_sql_file!(
    "../sql/erase.sql",
    name = "erase",
    requires = ["schema", "triggers"]
);
// The importer inserts rows as a restore does (triggers.sql's memory._restoring) and adds the
// statistics search.sql's trigger would have.
extension_sql_file!(
    "../sql/import.sql",
    name = "import",
    requires = [
        "schema",
        "triggers",
        "search",
        "detail",
        "checkpoints",
        "events",
        "consent",
        "store"
    ]
);
extension_sql_file!(
    "../sql/idempotency.sql",
    name = "idempotency",
    requires = ["schema"]
);
// The store's audit trigger writes history as triggers.sql's do (memory._restoring, _actor).
extension_sql_file!(
    "../sql/store.sql",
    name = "store",
    requires = ["schema", "triggers"]
);
// The change feed reads history's rows and the messages' and proposals' (schema) as they are
// written, and history's rows are written by triggers.sql's and store.sql's triggers.
extension_sql_file!(
    "../sql/changes.sql",
    name = "changes",
    requires = ["schema", "triggers", "store"]
);
// Spaces and grants; the history trigger names the member who wrote into a space.
extension_sql_file!("../sql/spaces.sql", name = "spaces", requires = ["schema"]);
// Webhooks' cursors and dead letters (written by the gateway as the tenant).
extension_sql_file!(
    "../sql/webhooks.sql",
    name = "webhooks",
    requires = ["schema"]
);
// Summaries the worker keeps: definitions, answers, versions and token use.
extension_sql_file!(
    "../sql/summaries.sql",
    name = "summaries",
    requires = ["schema"]
);
// Marks every table for pg_dump, the erasure receipts included (the change feed's are left out
// on purpose: sql/changes.sql says why).
extension_sql_file!(
    "../sql/backup.sql",
    name = "backup",
    requires = [
        "schema",
        "embed",
        "search",
        "consolidate",
        "worker",
        "erase",
        "idempotency",
        "store",
        "checkpoints",
        "changes",
        "spaces",
        "webhooks",
        "summaries"
    ]
);
// memory_overview resolves its tenant as the checkpoint functions do; both read the worker's,
// consolidation's and the embedder's tables.
extension_sql_file!(
    "../sql/stats.sql",
    name = "stats",
    requires = [
        "schema",
        "worker",
        "consolidate",
        "embed",
        api::checkpoints::resolve_tenant
    ]
);
extension_sql_file!("../sql/security.sql", name = "security", finalize);
