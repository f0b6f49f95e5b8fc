-- memory_ext 0.1.0 -> 0.2.0 (ALTER EXTENSION memory_ext UPDATE TO '0.2.0')
--
-- What changes: pg_dump now contains every table (0.1.0 dumps were empty); restores leave the
-- restored bookkeeping alone and rebuild the per-model indexes; the worker keeps a request
-- until a run answers it; hardening (audit hints no session can forge, a tenant check before a
-- message locks its thread, threads not deletable from under their data, the model registry and
-- the consolidation budget out of tenants' reach). No data is rewritten.
-- The fresh-install script of 0.2.0 and this upgrade give the same schema: tests/upgrade checks
-- it, catalog by catalog.

\echo Use "ALTER EXTENSION memory_ext UPDATE TO '0.2.0'" to load this file. \quit

-------------------------------------------------------------------------------- restores
CREATE FUNCTION memory._restoring() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT current_setting('row_security') = 'off' AND current_setting('check_function_bodies') = 'off'
$$;

-------------------------------------------------------------------------------- audit hints
-- Hints move from settings any session could set (memory.reason, memory.meta, memory.actor)
-- into the backend's memory, set only by the extension's functions (src/pg/hints.rs).
DROP FUNCTION memory._hint(text);
CREATE FUNCTION memory."_hint"(
	"name" TEXT
) RETURNS TEXT
STRICT STABLE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'hint_wrapper';
CREATE OR REPLACE FUNCTION memory._actor() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT memory._invoker()
$$;

-------------------------------------------------------------------------------- triggers that leave restored rows alone
CREATE OR REPLACE FUNCTION memory._items_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    reason text := memory._hint('reason');
    cur    memory.items := coalesce(NEW, OLD);  -- NEW is NULL on DELETE, OLD on INSERT
    hist   text;
    change text;
    meta   jsonb;
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        hist := 'ADD';
        change := 'created';
    ELSIF TG_OP = 'DELETE' THEN
        hist := CASE WHEN reason = 'purge' THEN 'PURGE' ELSE 'DELETE' END;
        change := 'deleted';
    ELSIF OLD.state = 'active' AND NEW.state <> 'active' THEN
        hist := CASE reason WHEN 'ttl' THEN 'TTL' WHEN 'merge' THEN 'MERGE' ELSE 'DELETE' END;
        change := CASE reason WHEN 'merge' THEN 'merged' WHEN 'forget' THEN 'deleted' ELSE 'soft_deleted' END;
    ELSIF OLD.state <> 'active' AND NEW.state = 'active' THEN
        hist := 'RESTORE';
        change := 'restored';
    ELSIF reason = 'merge' THEN
        hist := 'MERGE';
        change := 'merged';
    ELSE
        hist := 'UPDATE';
        change := 'updated';
    END IF;

    meta := memory._item_meta(cur);
    IF TG_OP = 'UPDATE' AND OLD.state IS DISTINCT FROM NEW.state THEN
        meta := meta || jsonb_build_object('state_from', OLD.state, 'state_to', NEW.state);
    END IF;

    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (cur.user_id, 'item', cur.id::text, hist,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.text END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.text END,
            memory._actor(),
            meta || jsonb_build_object('reason', reason) || memory._hint_meta());

    -- The thread the item is in now; when it moved, or on DELETE, the thread it was in.
    IF TG_OP <> 'DELETE' AND NEW.thread_id IS NOT NULL THEN
        PERFORM memory._bump_revision(NEW.user_id, NEW.thread_id, NEW.id::text, change, meta, true);
    END IF;
    -- A purge removes what the thread already saw go (~soft_deleted / -deleted): history only.
    IF TG_OP <> 'INSERT' AND OLD.thread_id IS NOT NULL AND reason IS DISTINCT FROM 'purge'
       AND (TG_OP = 'DELETE' OR OLD.thread_id IS DISTINCT FROM NEW.thread_id) THEN
        PERFORM memory._bump_revision(OLD.user_id, OLD.thread_id, OLD.id::text, change, meta, false);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory._relations_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, new_ref, actor, meta)
    VALUES (NEW.user_id, 'item', NEW.from_id::text, 'LINK', NEW.to_id::text, memory._actor(),
            jsonb_build_object('relation_type', NEW.relation_type, 'strength', NEW.strength) || memory._hint_meta());
    RETURN NULL;
END $$;

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
            CASE TG_OP WHEN 'INSERT' THEN 'ADD' WHEN 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.value END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.value END,
            memory._actor(),
            jsonb_build_object('agent_id', b.agent_id, 'label', b.label, 'version', b.version)
              || memory._hint_meta());
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory._messages_before_insert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NEW;  -- numbered already, and the thread's last_seq is restored with it
    END IF;
    INSERT INTO memory.threads AS t (user_id, thread_id, last_seq)
    VALUES (NEW.user_id, NEW.thread_id, coalesce(NEW.seq, 1))
    ON CONFLICT (user_id, thread_id)
        DO UPDATE SET last_seq = greatest(t.last_seq + 1, coalesce(EXCLUDED.last_seq, 0)), updated_at = now()
    RETURNING t.last_seq INTO NEW.seq;
    IF NEW.token_count IS NULL THEN
        NEW.token_count := memory.message_token_count(NEW.role, NEW.content, NEW.name, NEW.tool_calls);
    END IF;
    RETURN NEW;
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
        CASE TG_OP WHEN 'INSERT' THEN 'message_added' WHEN 'UPDATE' THEN 'message_updated' ELSE 'message_deleted' END,
        jsonb_build_object('seq', m.seq, 'role', m.role),
        false);
    -- Edits and deletions of recall memory are history events too (docs/design.md "History"); a new message
    -- is not (the change log has it, and recall keeps every message anyway).
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
        VALUES (m.user_id, 'message', m.id::text, CASE TG_OP WHEN 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
                left(OLD.content, 280), CASE WHEN TG_OP = 'UPDATE' THEN left(NEW.content, 280) END,
                memory._actor(),
                jsonb_build_object('thread_id', m.thread_id, 'seq', m.seq, 'role', m.role) || memory._hint_meta());
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory._items_term_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    u text[];
    t text[];
    v tsvector[];
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;  -- the statistics are restored with the memories (sql/triggers.sql)
    END IF;
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(user_id), array_agg(thread_id), array_agg(tsv) INTO u, t, v FROM new_rows;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, 1); END IF;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(user_id), array_agg(thread_id), array_agg(tsv) INTO u, t, v FROM old_rows;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, -1); END IF;
    ELSE
        -- Only rows whose text (or thread) changed; access bookkeeping does not touch terms.
        SELECT array_agg(o.user_id), array_agg(o.thread_id), array_agg(o.tsv) INTO u, t, v
        FROM old_rows o JOIN new_rows n ON n.user_id = o.user_id AND n.id = o.id
        WHERE o.tsv IS DISTINCT FROM n.tsv OR o.thread_id IS DISTINCT FROM n.thread_id;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, -1); END IF;
        SELECT array_agg(n.user_id), array_agg(n.thread_id), array_agg(n.tsv) INTO u, t, v
        FROM old_rows o JOIN new_rows n ON n.user_id = o.user_id AND n.id = o.id
        WHERE o.tsv IS DISTINCT FROM n.tsv OR o.thread_id IS DISTINCT FROM n.thread_id;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, 1); END IF;
    END IF;
    RETURN NULL;
END $$;

-------------------------------------------------------------------------------- messages: the tenant check first
CREATE FUNCTION memory._messages_admit() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF row_security_active('memory.messages') AND NEW.user_id IS DISTINCT FROM memory.current_tenant() THEN
        RAISE EXCEPTION 'new row violates row-level security policy for table "messages"'
            USING ERRCODE = '42501', HINT = 'a session writes only its own tenant''s messages';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER messages_admit BEFORE INSERT ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._messages_admit();

-------------------------------------------------------------------------------- threads: no deletion out from under their data
CREATE FUNCTION memory._threads_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM memory.messages m WHERE m.user_id = OLD.user_id AND m.thread_id = OLD.thread_id)
       OR EXISTS (SELECT 1 FROM memory.items i WHERE i.user_id = OLD.user_id AND i.thread_id = OLD.thread_id) THEN
        RAISE EXCEPTION 'thread "%" still has messages or memories', OLD.thread_id
            USING ERRCODE = '23503', HINT = 'delete its messages and memories first';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER threads_guard BEFORE DELETE ON memory.threads FOR EACH ROW
EXECUTE FUNCTION memory._threads_guard();

-------------------------------------------------------------------------------- the model registry
-- Indexes now follow the registry's rows (a trigger), so a restore brings them back; the
-- registering function is the owner's only and reports a full registry instead of failing.
CREATE FUNCTION memory._embedding_model_indexes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    vschema text;
    suffix  text := left(md5(NEW.model_id), 12);
    typ     text := NEW.index_type;
BEGIN
    IF typ IS NULL THEN
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
CREATE TRIGGER embedding_models_indexes AFTER INSERT ON memory.embedding_models FOR EACH ROW
EXECUTE FUNCTION memory._embedding_model_indexes();
DROP FUNCTION memory._ensure_embedding_model(text, integer);
CREATE FUNCTION memory._ensure_embedding_model(p_model text, p_dims integer) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    known memory.embedding_models;
    typ   text;
BEGIN
    SELECT * INTO known FROM memory.embedding_models WHERE model_id = p_model;
    IF NOT FOUND THEN
        -- First use: serialise concurrent first uses, then look again.
        PERFORM pg_advisory_xact_lock(hashtext('memory_ext.embedding_models'));
        SELECT * INTO known FROM memory.embedding_models WHERE model_id = p_model;
    END IF;
    IF FOUND THEN
        IF known.dims <> p_dims THEN
            RAISE EXCEPTION 'embedding model "%" returned % dimensions; its stored vectors have %', p_model, p_dims, known.dims
                USING ERRCODE = '58000', HINT = 'a model must always return the same number of dimensions: check memory_ext.embedding_dims and the endpoint';
        END IF;
        RETURN true;
    END IF;
    IF p_model IS NULL OR p_model = '' OR length(p_model) > 200 OR p_dims IS NULL OR p_dims NOT BETWEEN 1 AND 16000 THEN
        RAISE EXCEPTION 'invalid embedding model "%" with % dimensions', p_model, p_dims USING ERRCODE = '22023';
    END IF;
    IF (SELECT count(*) FROM memory.embedding_models) >= memory._max_embedding_models() THEN
        RETURN false;
    END IF;
    typ := CASE WHEN p_dims <= 2000 THEN 'vector' WHEN p_dims <= 4000 THEN 'halfvec' END;
    INSERT INTO memory.embedding_models (model_id, dims, index_type) VALUES (p_model, p_dims, typ);
    RETURN true;
END $$;
REVOKE ALL ON FUNCTION memory._ensure_embedding_model(text, integer) FROM PUBLIC;

-------------------------------------------------------------------------------- history of files and message edits
ALTER TABLE memory.history DROP CONSTRAINT history_entity_check,
    ADD CONSTRAINT history_entity_check CHECK (entity IN ('item', 'block', 'file', 'message'));
CREATE FUNCTION memory._files_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f memory.files := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (f.user_id, 'file', f.id::text,
            CASE TG_OP WHEN 'INSERT' THEN 'ADD' WHEN 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN left(OLD.content, 280) END,
            CASE WHEN TG_OP <> 'DELETE' THEN left(NEW.content, 280) END,
            memory._actor(),
            jsonb_build_object('path', f.path, 'title', f.title, 'chars', char_length(f.content))
              || CASE WHEN TG_OP = 'UPDATE' AND OLD.path <> NEW.path
                      THEN jsonb_build_object('old_path', OLD.path) ELSE '{}'::jsonb END
              || memory._hint_meta());
    RETURN NULL;
END $$;
CREATE TRIGGER files_audit_insert AFTER INSERT ON memory.files FOR EACH ROW
EXECUTE FUNCTION memory._files_audit();
CREATE TRIGGER files_audit_update AFTER UPDATE ON memory.files FOR EACH ROW
WHEN ((OLD.path, OLD.title, OLD.content, OLD.tags, OLD.metadata) IS DISTINCT FROM (NEW.path, NEW.title, NEW.content, NEW.tags, NEW.metadata))
EXECUTE FUNCTION memory._files_audit();
CREATE TRIGGER files_audit_delete AFTER DELETE ON memory.files FOR EACH ROW
EXECUTE FUNCTION memory._files_audit();

-------------------------------------------------------------------------------- checkpoints within memory_ext.max_value_bytes
CREATE FUNCTION memory."checkpoint_size"(
	"bytes" bigint /* i64 */
) RETURNS bigint /* i64 */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'checkpoint_size_wrapper';
CREATE OR REPLACE FUNCTION checkpoint_save(user_id text, thread_id text, data jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u text := memory.resolve_tenant(user_id);
    t text := memory.checkpoint_thread(thread_id);
    saved jsonb;
BEGIN
    IF data IS NULL THEN
        RAISE EXCEPTION 'data must not be null' USING ERRCODE = '22004';
    END IF;
    PERFORM memory.checkpoint_size(pg_column_size(data));  -- memory_ext.max_value_bytes
    INSERT INTO memory.checkpoints AS c (user_id, thread_id, checkpoint_data)
    VALUES (u, t, data)
    ON CONFLICT ON CONSTRAINT checkpoints_pkey
    DO UPDATE SET checkpoint_data = EXCLUDED.checkpoint_data, updated_at = now()
    RETURNING jsonb_build_object('thread_id', c.thread_id, 'created_at', c.created_at,
                                 'updated_at', c.updated_at)
    INTO saved;
    RETURN saved;
END
$$;

-------------------------------------------------------------------------------- export for tenants of any size
CREATE FUNCTION memory_export_rows(user_id text DEFAULT NULL)
RETURNS TABLE (section text, record jsonb)
LANGUAGE sql STABLE
AS $$
    WITH u AS (SELECT memory.resolve_tenant(user_id) AS id)
    SELECT s, r FROM (
        SELECT 1 AS o, 'agents' AS s, to_jsonb(a) - 'user_id' AS r, row_number() OVER (ORDER BY a.agent_id) AS n
        FROM memory.agents a, u WHERE a.user_id = u.id
        UNION ALL
        SELECT 2, 'blocks', to_jsonb(b) - 'user_id', row_number() OVER (ORDER BY b.agent_id, b.label)
        FROM memory.blocks b, u WHERE b.user_id = u.id
        UNION ALL
        SELECT 3, 'threads', to_jsonb(t) - 'user_id', row_number() OVER (ORDER BY t.thread_id)
        FROM memory.threads t, u WHERE t.user_id = u.id
        UNION ALL
        SELECT 4, 'messages', to_jsonb(m) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY m.thread_id, m.seq)
        FROM memory.messages m, u WHERE m.user_id = u.id
        UNION ALL
        SELECT 5, 'memories', to_jsonb(i) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY i.created_at, i.id)
        FROM memory.items i, u WHERE i.user_id = u.id
        UNION ALL
        SELECT 6, 'relations', to_jsonb(r) - 'user_id', row_number() OVER (ORDER BY r.created_at, r.id)
        FROM memory.relations r, u WHERE r.user_id = u.id
        UNION ALL
        SELECT 7, 'history', to_jsonb(h) - 'user_id', row_number() OVER (ORDER BY h.ts, h.id)
        FROM memory.history h, u WHERE h.user_id = u.id
        UNION ALL
        SELECT 8, 'categories', to_jsonb(c) - 'user_id', row_number() OVER (ORDER BY c.name)
        FROM memory.categories c, u WHERE c.user_id = u.id
        UNION ALL
        SELECT 9, 'allowlists', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.agent, l.category)
        FROM memory.allowlists l, u WHERE l.user_id = u.id
        UNION ALL
        SELECT 10, 'checkpoints', to_jsonb(k) - 'user_id', row_number() OVER (ORDER BY k.thread_id)
        FROM memory.checkpoints k, u WHERE k.user_id = u.id
        UNION ALL
        SELECT 11, 'details', to_jsonb(d) - 'user_id'
                              || jsonb_build_object('content', (SELECT coalesce(string_agg(c.content, '' ORDER BY c.n), '')
                                                                FROM memory.detail_chunks c
                                                                WHERE c.user_id = d.user_id AND c.key = d.key)),
               row_number() OVER (ORDER BY d.key)
        FROM memory.details d, u WHERE d.user_id = u.id
        UNION ALL
        SELECT 12, 'files', to_jsonb(f) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY f.path)
        FROM memory.files f, u WHERE f.user_id = u.id
        UNION ALL
        SELECT 13, 'events', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.ts, e.id)
        FROM memory.events e, u WHERE e.user_id = u.id
    ) x
    ORDER BY o, n
$$;


-------------------------------------------------------------------------------- the worker
-- Requests survive a run cut short; job rows appear on first use (the rows 0.1.0 shipped stay:
-- they are state like any other).
ALTER TABLE memory.worker_jobs ADD COLUMN request_attempts integer NOT NULL DEFAULT 0 CHECK (request_attempts >= 0);
CREATE FUNCTION memory._worker_job_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ARRAY['backfill', 'consolidate', 'purge', 'ttl_sweep'] $$;
CREATE FUNCTION memory._max_request_attempts() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 3 $$;
DROP VIEW memory.worker_status;
CREATE VIEW memory.worker_status AS
SELECT n.job,
       n.job = ANY (string_to_array(replace(lower(current_setting('memory_ext.worker_jobs', true)), ' ', ''), ','))
           AS scheduled,
       j.last_started_at, j.last_finished_at, j.last_duration_ms, j.last_counts,
       coalesce(j.runs, 0) AS runs, coalesce(j.failures, 0) AS failures, j.last_error, j.last_error_at, j.requested_at,
       w.pid AS worker_pid, w.datname AS worker_database
FROM unnest(memory._worker_job_names()) AS n(job)
LEFT JOIN memory.worker_jobs j USING (job)
LEFT JOIN LATERAL (SELECT a.pid, a.datname FROM pg_stat_activity a
                   WHERE a.backend_type = 'memory_ext worker' LIMIT 1) w ON true
ORDER BY n.job;
CREATE OR REPLACE FUNCTION memory_worker_run(job text) RETURNS timestamptz
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    at timestamptz;
BEGIN
    IF lower(memory_worker_run.job) IS NULL OR NOT lower(memory_worker_run.job) = ANY (memory._worker_job_names()) THEN
        RAISE EXCEPTION 'unknown worker job "%"', job
            USING ERRCODE = '22023', HINT = 'jobs: ttl_sweep, purge, consolidate, backfill';
    END IF;
    INSERT INTO memory.worker_jobs AS j (job, requested_at) VALUES (lower(memory_worker_run.job), now())
    ON CONFLICT ON CONSTRAINT worker_jobs_pkey DO UPDATE SET requested_at = now(), request_attempts = 0
    RETURNING j.requested_at INTO at;
    RETURN at;
END
$$;

-------------------------------------------------------------------------------- privileges
-- The consolidation budget and its bookkeeping are the operator's: tenants read them only.
REVOKE INSERT, UPDATE, DELETE ON memory.consolidation_fingerprints, memory.consolidation_usage,
    memory.consolidation_seen FROM PUBLIC;

-------------------------------------------------------------------------------- backups
-- Every table is dumped by pg_dump from now on (sql/backup.sql says why).
DO $$
DECLARE
    t regclass;
BEGIN
    FOR t IN SELECT c.oid::regclass FROM pg_catalog.pg_class c
             WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind = 'r' ORDER BY c.relname
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(t, '');
    END LOOP;
END $$;
