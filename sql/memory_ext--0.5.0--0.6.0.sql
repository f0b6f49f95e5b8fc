-- memory_ext 0.5.0 -> 0.6.0 (ALTER EXTENSION memory_ext UPDATE TO '0.6.0')
--
-- What changes: memory that forms and keeps itself current in the background.
-- - Extraction (docs/design.md "Extraction"): new tables memory.extractions (each thread's
--   watermark and retry state) and memory.extraction_usage (per tenant and day: writes against
--   the daily cap, LLM calls and tokens); new function memory_extract(thread_id); worker job
--   'extract'. Every thread that exists at upgrade time starts at its last message: extraction
--   covers what is said from now on, not the history (set a thread's extracted_seq to 0 to have
--   its history read).
-- - Ended runs (docs/api.md "Episodes"): new table memory.run_ends and function run_end; worker
--   job 'episodes' (episodes and compaction after a run, off the application's call, and the
--   weekly project roll-ups; memory_rollup runs those now).
-- - Consent (docs/api.md "Consent"): new table memory.proposals; memory_write reads "source";
--   new functions memory_proposals, memory_approve, memory_reject; memory_purge marks expired
--   proposals; memory_export lists proposals (both functions are replaced).
-- - memory.worker_jobs accepts the two new jobs; memory._worker_job_names and
--   memory_worker_run list them.
-- - Triggers in forms that also run on a Citus shard (docs/citus.md): three audit functions
--   replaced, the blocks triggers' WHEN written out, memory._block_changed dropped; now() moved
--   out of ON CONFLICT DO UPDATE SET and RETURNING (_bump_revision, _messages_before_insert,
--   checkpoint_save); the model registry's index trigger acts only on the registry itself, not on
--   a Citus shard of it.
-- - Citus (docs/citus.md): new functions memory_citus_distribute() (the operator's) and
--   memory._tenant_to_workers (the session's tenant handed to the workers) and
--   memory._seconds_after (retry times Citus accepts in ON CONFLICT DO UPDATE SET); the term
--   statistics' decrements run one tenant at a time (memory._apply_term_stats replaced).
-- No stored row is rewritten. The fresh-install script of 0.6.0 and this upgrade give the same
-- schema: tests/upgrade checks it, catalog by catalog.

\echo Use "ALTER EXTENSION memory_ext UPDATE TO '0.6.0'" to load this file. \quit

-------------------------------------------------------------------------------- tables
-- Extraction (0.6.0, docs/design.md "Extraction"): how far the background worker has read each
-- thread. Every message up to extracted_seq has been through extraction, and the watermark moves
-- in the transaction that writes what was extracted, so a worker killed mid-batch repeats the
-- batch instead of losing or doubling it. attempts / retry_at / last_error: a failing thread's
-- bounded retries (the others go on meanwhile). A thread without a row starts from its first
-- message. Written by the extension as its owner; tenants read their own rows.
CREATE TABLE memory.extractions (
    user_id       text        NOT NULL,
    thread_id     text        NOT NULL,
    extracted_seq bigint      NOT NULL DEFAULT 0 CHECK (extracted_seq >= 0),
    attempts      integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at      timestamptz,
    last_error    text,
    last_run_at   timestamptz,
    PRIMARY KEY (user_id, thread_id),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);

-- Per tenant and day: memories extraction wrote (memory_ext.extract_daily_cap bounds them) and
-- what its LLM calls cost. Written by the extension as its owner: a tenant cannot reset its cap.
CREATE TABLE memory.extraction_usage (
    user_id    text    NOT NULL,
    day        date    NOT NULL,
    writes     integer NOT NULL DEFAULT 0 CHECK (writes >= 0),
    calls      integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    tokens_in  bigint  NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out bigint  NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    PRIMARY KEY (user_id, day)
);

-- Ended runs waiting for the worker (0.6.0, docs/api.md "Episodes"): run_end only records the
-- request here; the worker writes the episode and compacts when the context is full, then
-- deletes the row. One pending end per thread: a second run_end before the worker gets to it
-- updates the first (its episode covers both).
CREATE TABLE memory.run_ends (
    user_id        text        NOT NULL,
    thread_id      text        NOT NULL,
    run_id         text        CHECK (run_id <> ''),
    context_window integer     CHECK (context_window > 0),
    requested_at   timestamptz NOT NULL DEFAULT now(),
    attempts       integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at       timestamptz NOT NULL DEFAULT now(),
    last_error     text,
    PRIMARY KEY (user_id, thread_id),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);
CREATE INDEX run_ends_retry_idx ON memory.run_ends (retry_at);

-- Consent (0.6.0, docs/api.md "Consent"): a change to a sensitive field (a memory of a category
-- in memory_ext.consent_categories) that was inferred, not stated (extraction, or memory_write
-- with "source": "inferred"), waits here for memory_approve / memory_reject instead of being
-- written; it expires after 7 days. A benign field (memory_ext.corroborate_categories) is written
-- once a second signal with the same text corroborates it. `request` is the memory_write request
-- applied on approval; the row stays after the decision (status, decided_at, decided_by: the
-- audit of the decision). Written by the extension as its owner; tenants read their own rows.
CREATE TABLE memory.proposals (
    user_id    text        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    category   text        NOT NULL,
    text       text        NOT NULL,
    request    jsonb       NOT NULL CHECK (jsonb_typeof(request) = 'object'),
    policy     text        NOT NULL CHECK (policy IN ('consent', 'corroborate')),
    signals    integer     NOT NULL DEFAULT 1 CHECK (signals >= 1),
    status     text        NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'applied')),
    thread_id  text,
    memory_id  uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL DEFAULT now() + interval '7 days',
    decided_at timestamptz,
    decided_by text,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX proposals_pending_idx ON memory.proposals (user_id, category) WHERE status = 'pending';

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['extractions', 'extraction_usage', 'run_ends', 'proposals']
    LOOP
        EXECUTE format('ALTER TABLE memory.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON memory.%I
                            USING (user_id = memory.current_tenant())
                            WITH CHECK (user_id = memory.current_tenant())', t);
        -- In pg_dump's output, as every table of schema memory (sql/backup.sql).
        PERFORM pg_catalog.pg_extension_config_dump(format('memory.%I', t)::regclass, '');
    END LOOP;
END $$;
GRANT SELECT ON memory.extractions, memory.extraction_usage, memory.proposals TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.run_ends TO PUBLIC;

-- Threads that exist now: extraction starts at their last message.
INSERT INTO memory.extractions (user_id, thread_id, extracted_seq)
SELECT user_id, thread_id, last_seq FROM memory.threads
ON CONFLICT (user_id, thread_id) DO NOTHING;

-------------------------------------------------------------------------------- worker
ALTER TABLE memory.worker_jobs DROP CONSTRAINT worker_jobs_job_check,
    ADD CONSTRAINT worker_jobs_job_check CHECK (job IN ('ttl_sweep', 'purge', 'consolidate', 'backfill', 'extract', 'episodes'));
CREATE OR REPLACE FUNCTION memory._worker_job_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ARRAY['backfill', 'consolidate', 'episodes', 'extract', 'purge', 'ttl_sweep'] $$;
CREATE OR REPLACE FUNCTION memory_worker_run(job text) RETURNS timestamptz
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    at timestamptz;
BEGIN
    IF lower(memory_worker_run.job) IS NULL OR NOT lower(memory_worker_run.job) = ANY (memory._worker_job_names()) THEN
        RAISE EXCEPTION 'unknown worker job "%"', job
            USING ERRCODE = '22023', HINT = 'jobs: ttl_sweep, purge, consolidate, backfill, extract, episodes';
    END IF;
    INSERT INTO memory.worker_jobs AS j (job, requested_at) VALUES (lower(memory_worker_run.job), now())
    ON CONFLICT ON CONSTRAINT worker_jobs_pkey DO UPDATE SET requested_at = now(), request_attempts = 0
    RETURNING j.requested_at INTO at;
    RETURN at;
END
$$;
REVOKE ALL ON FUNCTION memory_worker_run(text) FROM PUBLIC;

-------------------------------------------------------------------------------- functions
CREATE  FUNCTION "memory_extract"(
	"thread_id" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_extract_wrapper';

CREATE  FUNCTION "run_end"(
	"thread_id" TEXT, /* Option < & str > */
	"run_id" TEXT DEFAULT NULL, /* Option < & str > */
	"context_window" INT DEFAULT NULL /* Option < i32 > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'run_end_wrapper';

CREATE  FUNCTION "memory_approve"(
	"id" uuid /* Option < pgrx :: Uuid > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_approve_wrapper';

CREATE  FUNCTION "memory_reject"(
	"id" uuid /* Option < pgrx :: Uuid > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_reject_wrapper';

CREATE  FUNCTION "memory_rollup"(
	"project" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_rollup_wrapper';

-------------------------------------------------------------------------------- consent (sql/consent.sql)
-- memory_proposals(user_id) -> table: the tenant's consent proposals (docs/api.md "Consent"),
-- newest first; a pending one past its expiry shows as 'expired' (memory_purge records it so).
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
-- PL/pgSQL: Citus plans no SQL function with parameters (docs/citus.md).
CREATE FUNCTION memory_proposals(user_id text DEFAULT NULL)
RETURNS TABLE (id uuid, category text, text text, policy text, signals integer, status text,
               thread_id text, memory_id uuid, created_at timestamptz, expires_at timestamptz,
               decided_at timestamptz, decided_by text)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    tenant text := memory.resolve_tenant(memory_proposals.user_id);
BEGIN
    RETURN QUERY
    SELECT p.id, p.category, p.text, p.policy, p.signals,
           CASE WHEN p.status = 'pending' AND p.expires_at <= now() THEN 'expired' ELSE p.status END,
           p.thread_id, p.memory_id, p.created_at, p.expires_at, p.decided_at, p.decided_by
    FROM memory.proposals p
    WHERE p.user_id = tenant
    ORDER BY p.created_at DESC, p.id;
END
$$;

-------------------------------------------------------------------------------- export (sql/audit.sql: proposals)
-- memory_export_rows(user_id) -> table (section text, record jsonb): memory_export as a stream of
-- rows, one per stored row, in the same sections and order. memory_export builds one jsonb
-- document, which Postgres caps at 256 MB of JSON (54000 beyond); this has no such cap: a
-- driver reads it with a cursor, psql with \copy, and a tenant of any size can be exported.
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
-- PL/pgSQL with the tenant in a variable, not SQL with it in a CTE: Citus routes each part to
-- the tenant's shard only by a value it can see, and plans no SQL function with parameters
-- (docs/citus.md).
CREATE OR REPLACE FUNCTION memory_export_rows(user_id text DEFAULT NULL)
RETURNS TABLE (section text, record jsonb)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    tenant text := memory.resolve_tenant(memory_export_rows.user_id);
BEGIN
    RETURN QUERY
    SELECT s, r FROM (
        SELECT 1 AS o, 'agents' AS s, to_jsonb(a) - 'user_id' AS r, row_number() OVER (ORDER BY a.agent_id) AS n
        FROM memory.agents a WHERE a.user_id = tenant
        UNION ALL
        SELECT 2, 'blocks', to_jsonb(b) - 'user_id', row_number() OVER (ORDER BY b.agent_id, b.label)
        FROM memory.blocks b WHERE b.user_id = tenant
        UNION ALL
        SELECT 3, 'threads', to_jsonb(t) - 'user_id', row_number() OVER (ORDER BY t.thread_id)
        FROM memory.threads t WHERE t.user_id = tenant
        UNION ALL
        SELECT 4, 'messages', to_jsonb(m) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY m.thread_id, m.seq)
        FROM memory.messages m WHERE m.user_id = tenant
        UNION ALL
        SELECT 5, 'memories', to_jsonb(i) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY i.created_at, i.id)
        FROM memory.items i WHERE i.user_id = tenant
        UNION ALL
        SELECT 6, 'relations', to_jsonb(r) - 'user_id', row_number() OVER (ORDER BY r.created_at, r.id)
        FROM memory.relations r WHERE r.user_id = tenant
        UNION ALL
        SELECT 7, 'history', to_jsonb(h) - 'user_id', row_number() OVER (ORDER BY h.ts, h.id)
        FROM memory.history h WHERE h.user_id = tenant
        UNION ALL
        SELECT 8, 'categories', to_jsonb(c) - 'user_id', row_number() OVER (ORDER BY c.name)
        FROM memory.categories c WHERE c.user_id = tenant
        UNION ALL
        SELECT 9, 'allowlists', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.agent, l.category)
        FROM memory.allowlists l WHERE l.user_id = tenant
        UNION ALL
        SELECT 10, 'checkpoints', to_jsonb(k) - 'user_id', row_number() OVER (ORDER BY k.thread_id)
        FROM memory.checkpoints k WHERE k.user_id = tenant
        UNION ALL
        SELECT 11, 'details', to_jsonb(d) - 'user_id'
                              || jsonb_build_object('content', (SELECT coalesce(string_agg(c.content, '' ORDER BY c.n), '')
                                                                FROM memory.detail_chunks c
                                                                WHERE c.user_id = d.user_id AND c.key = d.key)),
               row_number() OVER (ORDER BY d.key)
        FROM memory.details d WHERE d.user_id = tenant
        UNION ALL
        SELECT 12, 'files', to_jsonb(f) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY f.path)
        FROM memory.files f WHERE f.user_id = tenant
        UNION ALL
        SELECT 13, 'events', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.ts, e.id)
        FROM memory.events e WHERE e.user_id = tenant
        UNION ALL
        SELECT 14, 'proposals', to_jsonb(p) - 'user_id', row_number() OVER (ORDER BY p.created_at, p.id)
        FROM memory.proposals p WHERE p.user_id = tenant
    ) x
    ORDER BY o, n;
END
$$;

-------------------------------------------------------------------------------- triggers (Citus-safe forms)
-- The same statements on plain Postgres and on a Citus shard (docs/citus.md): the audit
-- triggers' TG_OP tests as searched CASEs (Citus mis-translates a simple CASE over TG_OP inside
-- the INSERT it routes), and the blocks triggers' change test written out in WHEN instead of a
-- function of the table's row type (a shard's rows have another type). Same behaviour.
CREATE OR REPLACE FUNCTION memory._blocks_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    b memory.blocks := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (b.user_id, 'block', b.id::text,
            CASE WHEN TG_OP = 'INSERT' THEN 'ADD' WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.value END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.value END,
            memory._actor(),
            jsonb_build_object('agent_id', b.agent_id, 'label', b.label, 'version', b.version)
              || memory._hint_meta());
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory._messages_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    m memory.messages := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._bump_revision(m.user_id, m.thread_id, m.id::text,
        CASE WHEN TG_OP = 'INSERT' THEN 'message_added' WHEN TG_OP = 'UPDATE' THEN 'message_updated' ELSE 'message_deleted' END,
        jsonb_build_object('seq', m.seq, 'role', m.role),
        false);
    -- Edits and deletions of recall memory are history events too (docs/design.md "History"); a new message
    -- is not (the change log has it, and recall keeps every message anyway).
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
        VALUES (m.user_id, 'message', m.id::text, CASE WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
                left(OLD.content, 280), CASE WHEN TG_OP = 'UPDATE' THEN left(NEW.content, 280) END,
                memory._actor(),
                jsonb_build_object('thread_id', m.thread_id, 'seq', m.seq, 'role', m.role) || memory._hint_meta());
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory._files_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f memory.files := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (f.user_id, 'file', f.id::text,
            CASE WHEN TG_OP = 'INSERT' THEN 'ADD' WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN left(OLD.content, 280) END,
            CASE WHEN TG_OP <> 'DELETE' THEN left(NEW.content, 280) END,
            memory._actor(),
            jsonb_build_object('path', f.path, 'title', f.title, 'chars', char_length(f.content))
              || CASE WHEN TG_OP = 'UPDATE' AND OLD.path <> NEW.path
                      THEN jsonb_build_object('old_path', OLD.path) ELSE '{}'::jsonb END
              || memory._hint_meta());
    RETURN NULL;
END $$;

DROP TRIGGER blocks_version ON memory.blocks;
DROP TRIGGER blocks_audit_update ON memory.blocks;
DROP FUNCTION memory._block_changed(memory.blocks, memory.blocks);
CREATE TRIGGER blocks_version BEFORE UPDATE ON memory.blocks FOR EACH ROW
WHEN ((OLD.value, OLD.description, OLD.char_limit, OLD.read_only, OLD.label)
      IS DISTINCT FROM (NEW.value, NEW.description, NEW.char_limit, NEW.read_only, NEW.label))
EXECUTE FUNCTION memory._blocks_version();
CREATE TRIGGER blocks_audit_update AFTER UPDATE ON memory.blocks FOR EACH ROW
WHEN ((OLD.value, OLD.description, OLD.char_limit, OLD.read_only, OLD.label)
      IS DISTINCT FROM (NEW.value, NEW.description, NEW.char_limit, NEW.read_only, NEW.label))
EXECUTE FUNCTION memory._blocks_audit();

-- now() out of ON CONFLICT DO UPDATE SET and RETURNING (Citus allows only immutable functions
-- there): the thread upserts of _bump_revision and _messages_before_insert, and checkpoint_save.
CREATE OR REPLACE FUNCTION memory._bump_revision(p_user text, p_thread text, p_memory_id text, p_event text,
                                      p_meta jsonb, p_create_thread boolean)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE r bigint;
BEGIN
    IF p_create_thread THEN
        -- now() in VALUES, not in DO UPDATE SET: Citus allows only immutable functions there
        -- (docs/citus.md); the same statement on plain Postgres.
        INSERT INTO memory.threads AS t (user_id, thread_id, revision, updated_at)
        VALUES (p_user, p_thread, 1, now())
        ON CONFLICT (user_id, thread_id) DO UPDATE SET revision = t.revision + 1, updated_at = EXCLUDED.updated_at
        RETURNING t.revision INTO r;
    ELSE
        UPDATE memory.threads SET revision = revision + 1, updated_at = now()
        WHERE user_id = p_user AND thread_id = p_thread
        RETURNING revision INTO r;
        IF r IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO memory.change_log (user_id, thread_id, rev, memory_id, event, meta)
    VALUES (p_user, p_thread, r, p_memory_id, p_event, coalesce(p_meta, '{}'::jsonb) || memory._hint_meta());
    RETURN r;
END $$;

CREATE OR REPLACE FUNCTION memory._messages_before_insert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NEW;  -- numbered already, and the thread's last_seq is restored with it
    END IF;
    INSERT INTO memory.threads AS t (user_id, thread_id, last_seq, updated_at)
    VALUES (NEW.user_id, NEW.thread_id, coalesce(NEW.seq, 1), now())
    ON CONFLICT (user_id, thread_id)
        DO UPDATE SET last_seq = greatest(t.last_seq + 1, coalesce(EXCLUDED.last_seq, 0)),
                      updated_at = EXCLUDED.updated_at  -- not now() here: see _bump_revision
    RETURNING t.last_seq INTO NEW.seq;
    IF NEW.token_count IS NULL THEN
        NEW.token_count := memory.message_token_count(NEW.role, NEW.content, NEW.name, NEW.tool_calls);
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION checkpoint_save(user_id text, thread_id text, data jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u text := memory.resolve_tenant(user_id);
    t text := memory.checkpoint_thread(thread_id);
    created timestamptz;
    updated timestamptz;
BEGIN
    IF data IS NULL THEN
        RAISE EXCEPTION 'data must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM memory.checkpoint_size(pg_column_size(data));  -- memory_ext.max_value_bytes
    -- now() in VALUES and plain columns in RETURNING: Citus allows only immutable functions in
    -- DO UPDATE SET and RETURNING (docs/citus.md); the answer is built afterwards.
    INSERT INTO memory.checkpoints AS c (user_id, thread_id, checkpoint_data, updated_at)
    VALUES (u, t, data, now())
    ON CONFLICT ON CONSTRAINT checkpoints_pkey
    DO UPDATE SET checkpoint_data = EXCLUDED.checkpoint_data, updated_at = EXCLUDED.updated_at
    RETURNING c.created_at, c.updated_at INTO created, updated;
    RETURN jsonb_build_object('thread_id', t, 'created_at', created, 'updated_at', updated);
END
$$;

-------------------------------------------------------------------------------- citus
CREATE OR REPLACE FUNCTION memory._embedding_model_indexes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    vschema text;
    suffix  text := left(md5(NEW.model_id), 12);
    typ     text := NEW.index_type;
BEGIN
    -- On Citus the registry is a reference table, and each node's copy of it (a shard named
    -- embedding_models_<n>) fires this trigger too; the indexes are made once, on the
    -- coordinator's table itself, which propagates them to every shard (docs/citus.md).
    IF typ IS NULL OR TG_TABLE_NAME <> 'embedding_models' THEN
        RETURN NULL;
    END IF;
    SELECT n.nspname INTO vschema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'vector';
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.items USING hnsw ((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                   'items_emb_' || suffix, vschema, typ, NEW.dims, vschema, typ || '_cosine_ops', NEW.model_id);
    PERFORM memory._name_partition_indexes('memory.items_emb_' || suffix);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.messages USING hnsw ((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                   'messages_emb_' || suffix, vschema, typ, NEW.dims, vschema, typ || '_cosine_ops', NEW.model_id);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.files USING hnsw ((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                   'files_emb_' || suffix, vschema, typ, NEW.dims, vschema, typ || '_cosine_ops', NEW.model_id);
    RETURN NULL;
END $$;

CREATE  FUNCTION "memory_citus_distribute"() RETURNS jsonb /* JsonB */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_citus_distribute_wrapper';

-- Scale-out on Citus (docs/citus.md). memory_citus_distribute (src/api/citus.rs, the work in
-- src/store/citus.rs) is the operator's: distributing a table needs its owner, and which
-- tables are sharded is not a tenant's choice.
REVOKE ALL ON FUNCTION memory_citus_distribute() FROM PUBLIC;

-- Gives this transaction's connections to Citus workers the tenant the coordinator acts for, and
-- the HNSW scan setting retrieval needs
-- (src/pg/tenant.rs calls it at the start of every API call on Citus). A session's
-- `SET memory_ext.user_id` stays on the coordinator; the workers' row-level security would
-- then see no tenant and return nothing.
-- - Citus sends a `SET LOCAL` on to the workers when citus.propagate_set_commands is 'local'
--   and it runs inside a function (a transaction block for Citus); the caller's value of that
--   setting is put back. The tenant was already checked (memory.current_tenant() rules on it),
--   and it stays the same value on the coordinator.
-- - The HNSW iterative scan the retrieval statements are written for (src/pg/vector.rs) goes
--   along: on a worker, without it, a tenant's filter on a shard's HNSW scan can starve the
--   scan of rows (the coordinator's own setting stays there). It lasts to the end of the
--   transaction on the workers (docs/citus.md).
-- - Citus sends it only with the BEGIN of a remote transaction block, and opens one for a read
--   only once the transaction is coordinated (after a write, or a row lock inside a function):
--   the FOR SHARE, which finds no row (thread_id is never null), is that lock, on the tenant's
--   own shard, so every later read of the call carries the tenant too.
-- - No SET clause (search_path): a function's SET clause would undo the SET LOCAL at its exit;
--   it calls only pg_catalog's functions, found first in any search_path that does not name
--   pg_catalog later, and as SECURITY INVOKER a shadowing function would get no more rights.
CREATE FUNCTION memory._tenant_to_workers(tenant text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    caller text := current_setting('citus.propagate_set_commands');
BEGIN
    PERFORM set_config('citus.propagate_set_commands', 'local', true);
    EXECUTE format('SET LOCAL memory_ext.user_id = %L', tenant);
    SET LOCAL hnsw.iterative_scan = relaxed_order;
    PERFORM set_config('citus.propagate_set_commands', caller, true);
    PERFORM 1 FROM memory.threads WHERE user_id = tenant AND thread_id IS NULL FOR SHARE;
END $$;

-- `ts` plus `secs` seconds, as an IMMUTABLE function: the retry times of
-- sql/queries/embed_failure.sql and episodes_end_failed.sql. Citus
-- accepts only immutable functions in ON CONFLICT DO UPDATE SET, and timestamptz + interval is
-- STABLE (a day or a month depends on the time zone). Whole seconds from an absolute instant do
-- not: this adds them through the epoch, with immutable operators only.
CREATE FUNCTION memory._seconds_after(ts timestamptz, secs double precision) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN to_timestamp(extract(epoch FROM ts - timestamptz 'epoch') + secs);

-- Term statistics: decrements one tenant at a time (sql/search.sql says why).
CREATE OR REPLACE FUNCTION memory._apply_term_stats(p_users text[], p_threads text[], p_tsvs tsvector[], sign integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    uid text;
BEGIN
    IF sign > 0 THEN
        INSERT INTO memory.corpus AS c (user_id, docs, total_len)
        SELECT user_id, count(*), coalesce(sum(length(tsv) - 1), 0)
        FROM unnest(p_users, p_tsvs) AS r(user_id, tsv) GROUP BY user_id ORDER BY user_id
        ON CONFLICT (user_id) DO UPDATE SET docs = c.docs + EXCLUDED.docs, total_len = c.total_len + EXCLUDED.total_len;
        INSERT INTO memory.lexicon AS l (user_id, lexeme, df)
        SELECT user_id, lexeme, count(*) FROM memory._terms(p_users, p_threads, p_tsvs) GROUP BY user_id, lexeme ORDER BY user_id, lexeme
        ON CONFLICT (user_id, lexeme) DO UPDATE SET df = l.df + EXCLUDED.df;
        INSERT INTO memory.thread_corpus AS t (user_id, thread_id, len)
        SELECT user_id, thread_id, coalesce(sum(length(tsv) - 1), 0)
        FROM unnest(p_users, p_threads, p_tsvs) AS r(user_id, thread_id, tsv) WHERE thread_id IS NOT NULL
        GROUP BY user_id, thread_id ORDER BY user_id, thread_id
        ON CONFLICT (user_id, thread_id) DO UPDATE SET len = t.len + EXCLUDED.len;
        INSERT INTO memory.thread_terms AS t (user_id, thread_id, lexeme, tf)
        SELECT user_id, thread_id, lexeme, sum(tf) FROM memory._terms(p_users, p_threads, p_tsvs) WHERE thread_id IS NOT NULL
        GROUP BY user_id, thread_id, lexeme ORDER BY user_id, thread_id, lexeme
        ON CONFLICT (user_id, thread_id, lexeme) DO UPDATE SET tf = t.tf + EXCLUDED.tf;
    ELSE
        -- Decrements are plain UPDATEs: an upsert would check the constraints of its proposed
        -- (negative) insert row before finding the conflict, and fail. One tenant at a time,
        -- named in each statement: on Citus this runs in a shard's trigger, where only a
        -- statement routed to one tenant's shard may run (a join over several tenants is a
        -- distributed query inside a shard's, which Citus refuses; docs/citus.md).
        FOREACH uid IN ARRAY (SELECT array_agg(DISTINCT x) FROM unnest(p_users) x) LOOP
            UPDATE memory.corpus c SET docs = c.docs - d.docs, total_len = c.total_len - d.len
            FROM (SELECT count(*) AS docs, coalesce(sum(length(tsv) - 1), 0) AS len
                  FROM unnest(p_users, p_tsvs) AS r(user_id, tsv) WHERE r.user_id = uid) d
            WHERE c.user_id = uid;
            UPDATE memory.lexicon l SET df = l.df - d.df
            FROM (SELECT lexeme, count(*) AS df FROM memory._terms(p_users, p_threads, p_tsvs)
                  WHERE user_id = uid GROUP BY lexeme) d
            WHERE l.user_id = uid AND l.lexeme = d.lexeme;
            UPDATE memory.thread_corpus t SET len = t.len - d.len
            FROM (SELECT thread_id, coalesce(sum(length(tsv) - 1), 0) AS len
                  FROM unnest(p_users, p_threads, p_tsvs) AS r(user_id, thread_id, tsv)
                  WHERE r.user_id = uid AND thread_id IS NOT NULL
                  GROUP BY thread_id) d
            WHERE t.user_id = uid AND t.thread_id = d.thread_id;
            UPDATE memory.thread_terms t SET tf = t.tf - d.tf
            FROM (SELECT thread_id, lexeme, sum(tf) AS tf FROM memory._terms(p_users, p_threads, p_tsvs)
                  WHERE user_id = uid AND thread_id IS NOT NULL
                  GROUP BY thread_id, lexeme) d
            WHERE t.user_id = uid AND t.thread_id = d.thread_id AND t.lexeme = d.lexeme;
            -- Terms no memory has any more go, so the tables do not grow without bound.
            DELETE FROM memory.lexicon l
            USING (SELECT DISTINCT lexeme FROM memory._terms(p_users, p_threads, p_tsvs) WHERE user_id = uid) d
            WHERE l.user_id = uid AND l.lexeme = d.lexeme AND l.df <= 0;
            DELETE FROM memory.thread_terms t
            USING (SELECT DISTINCT thread_id, lexeme FROM memory._terms(p_users, p_threads, p_tsvs) WHERE user_id = uid) d
            WHERE t.user_id = uid AND t.thread_id = d.thread_id AND t.lexeme = d.lexeme AND t.tf <= 0;
        END LOOP;
    END IF;
END $$;
