-- Tenant isolation and privileges (finalize: runs after every table and function exists).
--
-- Row-level security is on, and forced, for every table: a role without BYPASSRLS sees and
-- changes only rows whose user_id is its current tenant (memory.current_tenant():
-- memory_ext.user_id, or the role name when memory_ext.tenant_source = 'role'). With no
-- tenant set it sees nothing. Our API functions run as the caller (SECURITY INVOKER), so the
-- same policies apply through them.
--
-- # Why grants to PUBLIC
-- The API is meant for any application role ("SELECT memory_query(...) through an ordinary
-- driver"), and the row policies, not table grants, are what separate tenants. A DBA who wants
-- to limit which roles may use memory_ext at all can REVOKE these from PUBLIC and grant them
-- to a role of their choosing.
--
-- What ordinary roles may not do: edit the audit trail (history, change_log are read-only
-- to them; triggers write them), set a thread's revision (only triggers advance it), write the
-- consolidation budget, or run the SECURITY DEFINER helpers (none is executable by PUBLIC; the
-- trigger functions cannot be called directly at all).

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['agents', 'blocks', 'threads', 'messages', 'items', 'relations', 'change_log',
                             'history', 'events', 'categories', 'allowlists', 'checkpoints', 'embedding_failures',
                             'lexicon', 'corpus', 'thread_terms', 'thread_corpus',
                             'consolidation_fingerprints', 'consolidation_usage', 'consolidation_runs',
                             'consolidation_seen', 'details', 'detail_chunks', 'files',
                             'extractions', 'extraction_usage', 'run_ends', 'proposals', 'idempotency_keys',
                             'store_items', 'store_vectors', 'checkpoint_steps', 'checkpoint_blobs',
                             'checkpoint_writes', 'entities', 'entity_links', 'entity_relations', 'settings', 'changes',
                             'block_attachments', 'webhook_cursors', 'webhook_dead',
                             'summaries', 'summary_versions', 'summary_usage', 'access_queue']
    LOOP
        EXECUTE format('ALTER TABLE memory.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON memory.%I
                            USING (user_id = memory.current_tenant())
                            WITH CHECK (user_id = memory.current_tenant())', t);
    END LOOP;
END $$;

-- Spaces (sql/spaces.sql): a member reads a space's rows, and with `write` writes them, through
-- two more policies on every table that holds a tenant's rows. Postgres ORs a command's
-- permissive policies in reverse order of their names (15 to 18; EXPLAIN shows the filter) and
-- does not reorder an OR's arms: named space_* (before tenant_isolation), they come after its
-- cheap comparison, so a tenant's own rows are admitted before any space function is called.
-- (Named tenant_spaces_*, they came first: two function calls on every row of every query.)
-- A memory's category is checked against grants limited to categories; every other row passes
-- `false` (memory_core::spaces::Grant::admits says what such a grant admits).
--
-- Made by a function for a Citus cluster upgraded from 0.12.0: a policy on a distributed table
-- is made on the workers too, which do not have memory.space_reads until their extension is
-- updated, so memory_citus_distribute() makes them afterwards (src/ops/citus.rs); on one node
-- the upgrade calls it. Does nothing where they are.
CREATE FUNCTION memory._space_policies() RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    t text;
    memory text;
BEGIN
    IF EXISTS (SELECT FROM pg_policy WHERE polrelid = 'memory.items'::regclass AND polname = 'space_read') THEN
        RETURN false;
    END IF;
    -- Every table the tenant policy guards (its list is sql/security.sql's first loop, and
    -- each later table's own), grants aside: a member's grants are its own, not the space's.
    FOR t IN SELECT c.relname FROM pg_catalog.pg_policy p JOIN pg_catalog.pg_class c ON c.oid = p.polrelid
             WHERE p.polname = 'tenant_isolation' AND c.relnamespace = 'memory'::regnamespace
               AND c.relname <> 'grants'
             ORDER BY c.relname
    LOOP
        memory := CASE WHEN t = 'items' THEN 'true, category' ELSE 'false, NULL' END;
        EXECUTE format('CREATE POLICY space_read ON memory.%I FOR SELECT
                            USING (memory.space_reads(user_id, %s))', t, memory);
        EXECUTE format('CREATE POLICY space_write ON memory.%I
                            USING (memory.space_writes(user_id, %s))
                            WITH CHECK (memory.space_writes(user_id, %s))', t, memory, memory);
    END LOOP;
    RETURN true;
END $fn$;
REVOKE ALL ON FUNCTION memory._space_policies() FROM PUBLIC;
SELECT memory._space_policies();

-- Grants: a member reads its own (the tenant policy on user_id, the grantee); memory_grant and
-- memory_revoke write them as the owner after checking the caller is the space's admin.
ALTER TABLE memory.grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.grants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.grants
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT ON memory.grants TO PUBLIC;

GRANT USAGE ON SCHEMA memory TO PUBLIC;

GRANT SELECT, INSERT, UPDATE, DELETE ON
    memory.agents, memory.blocks, memory.messages, memory.items, memory.relations,
    memory.events, memory.categories, memory.allowlists, memory.checkpoints, memory.embedding_failures,
    memory.details, memory.detail_chunks, memory.files, memory.store_items, memory.store_vectors,
    memory.checkpoint_steps, memory.checkpoint_blobs, memory.checkpoint_writes,
    memory.entities, memory.entity_links, memory.entity_relations, memory.settings,
    memory.block_attachments, memory.webhook_cursors
TO PUBLIC;
-- Dead letters: the gateway records them and the tenant (or its inspector) reads and clears
-- them; rewriting one would only hide the tenant's own failure.
GRANT SELECT, INSERT, DELETE ON memory.webhook_dead TO PUBLIC;

-- Consolidation's bookkeeping enforces the operator's budget (memory_ext.consolidation_max_llm_calls
-- per tenant per day) and its pacing: a tenant that could delete it would get more LLM calls.
-- Readable by the tenant; written by the extension as its owner (src/pg/owner.rs).
GRANT SELECT ON memory.consolidation_fingerprints, memory.consolidation_usage, memory.consolidation_seen TO PUBLIC;
-- Extraction's watermarks and daily cap: the same reasoning (a tenant that could reset them
-- would get its history extracted again, or more LLM calls than the operator allows).
GRANT SELECT ON memory.extractions, memory.extraction_usage TO PUBLIC;
-- Consent proposals: a tenant decides through memory_approve / memory_reject, which record who
-- decided and when; it cannot rewrite a decision or a proposal's request directly.
GRANT SELECT ON memory.proposals TO PUBLIC;
-- The queue of ended runs is the worker's (0.9.0): a tenant enqueues only through run_end,
-- which writes it as the extension's owner (src/ops/episodes.rs), and reads its own rows. A
-- tenant that could write it could set its own retry times or attempts.
GRANT SELECT ON memory.run_ends TO PUBLIC;

-- Summaries (sql/summaries.sql): defined through memory_summary_define and written by the
-- worker, both as the extension's owner; a tenant that could write an answer, a version or its
-- token use could pass off its own text as the model's or spend past the operator's budget.
GRANT SELECT ON memory.summaries, memory.summary_versions, memory.summary_usage TO PUBLIC;

-- Idempotency keys: claimed, answered and (past memory_ext.idempotency_days) expired by the
-- tenant's own writes, as the caller (run_end's as the owner, with its queue row). A tenant
-- that changed or deleted its own keys would only lose its own retry safety.
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.idempotency_keys TO PUBLIC;

-- The access queue: a tenant's reads queue their own memories' ids (the worker, which bypasses
-- row-level security, folds and deletes them); the TTL sweep, run as the caller, reads them.
GRANT SELECT, INSERT ON memory.access_queue TO PUBLIC;

-- The model registry describes the database, not a tenant: readable by all, written only by
-- memory._ensure_embedding_model (SECURITY DEFINER).
GRANT SELECT ON memory.embedding_models TO PUBLIC;

-- Threads: created and described by applications; revision and last_seq belong to the triggers.
GRANT SELECT, DELETE ON memory.threads TO PUBLIC;
GRANT INSERT (user_id, thread_id, agent_id, metadata) ON memory.threads TO PUBLIC;
-- reported_rev is the tenant's own "what has the delta header told this thread" mark, moved by
-- memory_query / memory_delta running as the caller.
GRANT UPDATE (agent_id, metadata, reported_rev) ON memory.threads TO PUBLIC;

GRANT SELECT ON memory.change_log, memory.history TO PUBLIC;

-- The change feed: written by triggers only (sql/changes.sql), read through memory_changes.
GRANT SELECT ON memory.changes TO PUBLIC;

-- BM25 statistics: kept by triggers (SECURITY DEFINER), read by memory_query.
GRANT SELECT ON memory.lexicon, memory.corpus, memory.thread_terms, memory.thread_corpus TO PUBLIC;
