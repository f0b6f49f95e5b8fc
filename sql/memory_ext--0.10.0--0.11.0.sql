-- memory_ext 0.10.0 -> 0.11.0 (ALTER EXTENSION memory_ext UPDATE TO '0.11.0')
--
-- Erasure (docs/operations.md "Privacy"):
-- - A memory, message, file or block that is gone for good (purged, deleted) leaves no copy of
--   what it said: memory._erase_copies scrubs its history rows, change-log rows and the
--   bookkeeping that names it; the audit triggers call it on DELETE.
-- - memory_forget(id, hard => true) purges at once.
-- - memory_erase_tenant(user_id, reason) removes a tenant from every table and leaves a receipt
--   in memory.erasures.
-- Idempotency (docs/api.md "Idempotency"): memory.idempotency_keys; an idempotency_key on
-- memory_write (and batch items), message_append, session_add_items, episode_write and run_end.
-- Import (docs/api.md "Import"): message_append takes created_at and metadata; messages keep it.
-- Screening (docs/api.md "Screening"): memory.categories.screen (a category's overrides, set by
-- memory_configure); a proposal's policy may be 'flag' (held by screening until approved).
-- What earlier releases left in history after a purge stays there: memory._erase_old_copies
-- (near the end of this script) scrubs it (the history rows of memories, messages, files and blocks that no longer exist).

CREATE FUNCTION memory._erase_copies(p_user text, p_entity text, p_id text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- An episode_write's kept answer (sql/idempotency.sql) holds the episode's text, and its
    -- file's path is made from it: the text goes with the episode's memory, text and path with
    -- its file (found by the paths the file's history names, before those go).
    IF p_entity IN ('item', 'file') THEN
        UPDATE memory.idempotency_keys k
           SET answer = (k.answer - 'content' - CASE WHEN p_entity = 'file' THEN 'path' ELSE 'content' END)
                        || '{"erased": true}'
         WHERE k.user_id = p_user AND k.op = 'episode_write'
           AND (k.answer ->> 'memory_id' = p_id
                OR p_entity = 'file' AND k.answer ->> 'path' IN (
                    SELECT h.meta ->> 'path' FROM memory.history h
                     WHERE h.user_id = p_user AND h.entity = 'file' AND h.memory_id = p_id));
    END IF;
    UPDATE memory.history
       SET old_ref = NULL,
           -- a LINK's new_ref is the other memory's id, not what either said
           new_ref = CASE WHEN event = 'LINK' THEN new_ref END,
           meta = (meta - 'text' - 'path' - 'title' - 'old_path' - 'value') || '{"erased": true}'
     WHERE user_id = p_user AND entity = p_entity AND memory_id = p_id;
    IF p_entity IN ('item', 'message', 'file') THEN
        DELETE FROM memory.embedding_failures
         WHERE user_id = p_user AND target = p_entity AND row_id = p_id::uuid;
    END IF;
    IF p_entity = 'item' THEN
        UPDATE memory.change_log SET meta = (meta - 'text') || '{"erased": true}'
         WHERE user_id = p_user AND memory_id = p_id AND meta ? 'text';
        DELETE FROM memory.consolidation_fingerprints
         WHERE user_id = p_user AND (id_a = p_id::uuid OR id_b = p_id::uuid);
        DELETE FROM memory.consolidation_seen WHERE user_id = p_user AND id = p_id::uuid;
        UPDATE memory.proposals SET text = '', request = '{}'
         WHERE user_id = p_user AND memory_id = p_id::uuid;
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._erase_copies(text, text, text) FROM PUBLIC;

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
    ELSIF OLD.state = 'active' AND NEW.state = 'superseded' THEN
        hist := 'SUPERSEDE';
        change := 'superseded';
    ELSIF OLD.state IN ('active', 'superseded') AND NEW.state NOT IN ('active', 'superseded') THEN
        hist := CASE reason WHEN 'ttl' THEN 'TTL' WHEN 'merge' THEN 'MERGE' ELSE 'DELETE' END;
        change := CASE reason WHEN 'merge' THEN 'merged' WHEN 'forget' THEN 'deleted' ELSE 'soft_deleted' END;
    ELSIF OLD.state NOT IN ('active', 'superseded') AND NEW.state IN ('active', 'superseded') THEN
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
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'item', OLD.id::text);
    END IF;
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
            CASE WHEN TG_OP = 'INSERT' THEN 'ADD' WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.value END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.value END,
            memory._actor(),
            jsonb_build_object('agent_id', b.agent_id, 'label', b.label, 'version', b.version)
              || memory._hint_meta());
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'block', OLD.id::text);
    END IF;
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
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'message', OLD.id::text);
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
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'file', OLD.id::text);
    END IF;
    RETURN NULL;
END $$;

-- On Citus the trigger functions just replaced are planned per call again, as sql/citus.sql
-- has them (CREATE OR REPLACE resets their settings), and so is memory._erase_copies, which
-- they call on every DELETE.
CREATE OR REPLACE FUNCTION memory._citus_trigger_plans() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['_items_term_stats()', '_items_audit()', '_relations_audit()', '_blocks_audit()',
                             '_messages_before_insert()', '_messages_audit()', '_files_audit()', '_threads_guard()',
                             '_erase_copies(text, text, text)']
    LOOP
        EXECUTE format('ALTER FUNCTION memory.%s SET plan_cache_mode = force_custom_plan', f);
    END LOOP;
END $$;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._citus_trigger_plans();
    END IF;
END $$;

-- What erasures happened: the tenant only as a SHA-256 of its id, who erased it, when, why and
-- how many rows of each table went; never content. It survives the erasure it records, is
-- readable by the extension's owner only, is in pg_dump's output (the record must outlive a
-- restore) and in no tenant's export.
CREATE TABLE memory.erasures (
    id          uuid        NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
    tenant_hash text        NOT NULL,
    erased_at   timestamptz NOT NULL DEFAULT now(),
    erased_by   text        NOT NULL,
    reason      text        NOT NULL,
    rows        jsonb       NOT NULL CHECK (jsonb_typeof(rows) = 'object')
);
REVOKE ALL ON memory.erasures FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory.erasures', '');

-- The tenant tables, in the order the erasure deletes from them: the audit trail and the
-- change log first, so that the triggers that fire on the other tables' rows
-- (memory._erase_copies) find nothing left to scrub, then the rest by name.
CREATE FUNCTION memory._tenant_tables() RETURNS SETOF regclass
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.oid::regclass
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id' AND NOT a.attisdropped
    WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY c.relname NOT IN ('history', 'change_log', 'events'), c.relname
$$;
REVOKE ALL ON FUNCTION memory._tenant_tables() FROM PUBLIC;

-- The erasure itself, run as the owner by memory_erase_tenant (src/store/erase.rs), which
-- decides who may call it. One transaction: all of it happens or none. Deleting rows fires the
-- tables' triggers, which write history, change-log and statistics rows of the tenant again;
-- each pass deletes what the previous one left, until a pass finds nothing.
CREATE FUNCTION memory._erase_tenant(p_user text, p_reason text) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t      regclass;
    n      bigint;
    found  bigint;
    counts jsonb := '{}';
    pass   integer := 0;
    r      memory.erasures;
BEGIN
    FOR t IN SELECT * FROM memory._tenant_tables() LOOP
        EXECUTE format('SELECT count(*) FROM %s WHERE user_id = $1', t) INTO n USING p_user;
        IF n > 0 THEN
            counts := counts || jsonb_build_object(replace(t::text, 'memory.', ''), n);
        END IF;
    END LOOP;
    LOOP
        pass := pass + 1;
        found := 0;
        FOR t IN SELECT * FROM memory._tenant_tables() LOOP
            EXECUTE format('DELETE FROM %s WHERE user_id = $1', t) USING p_user;
            GET DIAGNOSTICS n = ROW_COUNT;
            found := found + n;
        END LOOP;
        EXIT WHEN found = 0;
        IF pass >= 5 THEN
            RAISE EXCEPTION 'erasing a tenant: rows keep appearing after % passes', pass
                USING ERRCODE = '55000';
        END IF;
    END LOOP;
    INSERT INTO memory.erasures (tenant_hash, erased_by, reason, rows)
    VALUES (encode(sha256(convert_to(p_user, 'UTF8')), 'hex'), memory._invoker(), p_reason, counts)
    RETURNING * INTO r;
    RETURN jsonb_build_object('id', r.id, 'tenant_hash', r.tenant_hash, 'erased_at', r.erased_at,
                              'erased_by', r.erased_by, 'reason', r.reason, 'rows', r.rows,
                              'total', (SELECT coalesce(sum(v::bigint), 0) FROM jsonb_each_text(counts) x(k, v)));
END $$;
REVOKE ALL ON FUNCTION memory._erase_tenant(text, text) FROM PUBLIC;

DROP FUNCTION memory_forget(uuid);
CREATE  FUNCTION "memory_forget"(
	"id" uuid, /* Option < pgrx :: Uuid > */
	"hard" bool DEFAULT false /* Option < bool > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_forget_wrapper';
CREATE  FUNCTION "memory_erase_tenant"(
	"user_id" TEXT, /* Option < & str > */
	"reason" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_erase_tenant_wrapper';

-------------------------------------------------------------------------------- idempotency
-- As sql/idempotency.sql. On Citus the table is created on every node (the coordinator runs this
-- script on each); `SELECT memory_citus_distribute()` then distributes it (docs/citus.md).
CREATE TABLE memory.idempotency_keys (
    user_id    text        NOT NULL,
    key        text        NOT NULL,
    op         text        NOT NULL,
    body_hash  bytea       NOT NULL,
    answer     jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created ON memory.idempotency_keys (created_at);
SELECT pg_catalog.pg_extension_config_dump('memory.idempotency_keys', '');
ALTER TABLE memory.idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.idempotency_keys
    USING (user_id = memory.current_tenant())
    WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.idempotency_keys TO PUBLIC;

DROP FUNCTION session_add_items(text, jsonb, text);
CREATE  FUNCTION "session_add_items"(
	"session_id" TEXT, /* Option < & str > */
	"items" jsonb, /* Option < Json > */
	"user_id" TEXT DEFAULT NULL, /* Option < & str > */
	"idempotency_key" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS bigint /* i64 */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_add_items_wrapper';
DROP FUNCTION episode_write(text, text, text);
CREATE  FUNCTION "episode_write"(
	"user_id" TEXT, /* Option < & str > */
	"thread_id" TEXT, /* Option < & str > */
	"run_id" TEXT DEFAULT NULL, /* Option < & str > */
	"idempotency_key" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'episode_write_wrapper';
DROP FUNCTION run_end(text, text, integer);
CREATE  FUNCTION "run_end"(
	"thread_id" TEXT, /* Option < & str > */
	"run_id" TEXT DEFAULT NULL, /* Option < & str > */
	"context_window" INT DEFAULT NULL, /* Option < i32 > */
	"idempotency_key" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'run_end_wrapper';

-------------------------------------------------------------------------------- import
-- memory_import and its helpers, as sql/import.sql has them.
-- The sections of a memory_export document, in the order they are inserted (each after what
-- its foreign keys name), with their tables.
CREATE FUNCTION memory._import_sections() RETURNS TABLE (section text, tbl regclass)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    VALUES ('agents', 'memory.agents'::regclass), ('threads', 'memory.threads'), ('blocks', 'memory.blocks'),
           ('memories', 'memory.items'), ('relations', 'memory.relations'), ('messages', 'memory.messages'),
           ('history', 'memory.history'), ('categories', 'memory.categories'),
           ('allowlists', 'memory.allowlists'), ('checkpoints', 'memory.checkpoints'),
           ('details', 'memory.details'), ('files', 'memory.files'), ('events', 'memory.events'),
           ('proposals', 'memory.proposals')
$$;
REVOKE ALL ON FUNCTION memory._import_sections() FROM PUBLIC;

-- One exported row for tenant p_user: its agent and thread ids remapped (p_agents, p_threads:
-- {"old": "new"}), its model cleared where the backfill must embed it.
CREATE FUNCTION memory._import_row(r jsonb, p_section text, p_user text, p_agents jsonb, p_threads jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT r || jsonb_build_object('user_id', p_user)
             || CASE WHEN r ? 'agent_id' AND p_agents ? (r ->> 'agent_id')
                     THEN jsonb_build_object('agent_id', p_agents -> (r ->> 'agent_id')) ELSE '{}'::jsonb END
             || CASE WHEN p_section = 'allowlists' AND p_agents ? (r ->> 'agent')
                     THEN jsonb_build_object('agent', p_agents -> (r ->> 'agent')) ELSE '{}'::jsonb END
             || CASE WHEN r ? 'thread_id' AND p_threads ? (r ->> 'thread_id')
                     THEN jsonb_build_object('thread_id', p_threads -> (r ->> 'thread_id')) ELSE '{}'::jsonb END
             || CASE WHEN p_section IN ('memories', 'messages', 'files')
                     THEN '{"embedding_model": null}'::jsonb ELSE '{}'::jsonb END
             -- An id that is not a UUID (a Letta file's "message-3", memory_core::import): one
             -- made from it, the same every time.
             || CASE WHEN r ? 'id' AND jsonb_typeof(r -> 'id') = 'string'
                          AND (r ->> 'id') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                     THEN jsonb_build_object('id', md5(r ->> 'id')::uuid) ELSE '{}'::jsonb END
$$;
REVOKE ALL ON FUNCTION memory._import_row(jsonb, text, text, jsonb, jsonb) FROM PUBLIC;

CREATE FUNCTION memory._import(p_user text, p_doc jsonb, p_agents jsonb, p_threads jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp SET row_security = off SET check_function_bodies = off AS $$
DECLARE
    s        record;
    v_rows   jsonb;
    pre      uuid[];
    cols     text;
    vals     text;
    n        bigint;
    total    bigint;
    taken    bigint;
    inserted jsonb := '{}';
    skipped  jsonb := '{}';
    det      record;
    i        integer;
BEGIN
    FOR s IN SELECT * FROM memory._import_sections() LOOP
        v_rows := p_doc -> s.section;
        CONTINUE WHEN v_rows IS NULL OR jsonb_typeof(v_rows) <> 'array' OR jsonb_array_length(v_rows) = 0;
        SELECT jsonb_agg(memory._import_row(r, s.section, p_user, p_agents, p_threads))
          INTO v_rows FROM jsonb_array_elements(v_rows) r;
        -- The columns the document has (an older release's export lacks newer ones, which take
        -- their defaults), generated columns aside.
        -- A null where the column has a default takes the default.
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
               string_agg(CASE WHEN a.attnotnull AND d.adbin IS NOT NULL
                               THEN format('coalesce(x.%I, %s)', a.attname, pg_get_expr(d.adbin, d.adrelid))
                               ELSE format('x.%I', a.attname) END, ', ' ORDER BY a.attnum)
          INTO cols, vals
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE a.attrelid = s.tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
           AND EXISTS (SELECT 1 FROM jsonb_array_elements(v_rows) r WHERE r ? a.attname);
        IF s.section = 'memories' THEN
            SELECT array_agg(i.id) INTO pre FROM memory.items i
             WHERE i.user_id = p_user AND i.id IN (SELECT (r ->> 'id')::uuid FROM jsonb_array_elements(v_rows) r);
        END IF;
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM jsonb_populate_recordset(NULL::%s, $1) x ON CONFLICT DO NOTHING',
                       s.tbl, cols, vals, s.tbl) USING v_rows;
        GET DIAGNOSTICS n = ROW_COUNT;
        total := jsonb_array_length(v_rows);
        inserted := inserted || jsonb_build_object(s.section, n);
        IF total > n THEN
            skipped := skipped || jsonb_build_object(s.section, total - n);
        END IF;
        -- Rows skipped for a conflict on their id were there already; any other skipped row
        -- collided with a different row of the tenant.
        IF total > n AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = s.tbl AND attname = 'id' AND NOT attisdropped) THEN
            EXECUTE format('SELECT count(*) FROM jsonb_array_elements($1) r
                            WHERE NOT EXISTS (SELECT 1 FROM %s t WHERE t.user_id = $2 AND t.id::text = r ->> ''id'')', s.tbl)
               INTO taken USING v_rows, p_user;
            IF taken > 0 THEN
                RAISE EXCEPTION 'memory_import: % of the document''s % collide with rows the tenant has', taken, s.section
                    USING ERRCODE = '23505',
                          HINT = 'map the document''s threads or agents to new ids: {"remap": {"thread_ids": {...}, "agent_ids": {...}}}';
            END IF;
        END IF;
        IF s.section = 'memories' AND n > 0 THEN
            -- The statistics the term trigger would have added (sql/search.sql).
            PERFORM memory._apply_term_stats(array_agg(i.user_id), array_agg(i.thread_id), array_agg(i.tsv), 1)
               FROM memory.items i
              WHERE i.user_id = p_user AND i.id IN (SELECT (r ->> 'id')::uuid FROM jsonb_array_elements(v_rows) r)
                AND NOT (i.id = ANY (coalesce(pre, '{}')))
             HAVING count(*) > 0;
        END IF;
        IF s.section = 'details' AND n > 0 THEN
            -- A detail's content is exported whole; stored in 64 KiB chunks (src/store/detail.rs).
            FOR det IN SELECT r ->> 'key' AS key, coalesce(r ->> 'content', '') AS content FROM jsonb_array_elements(v_rows) r LOOP
                IF NOT EXISTS (SELECT 1 FROM memory.detail_chunks c WHERE c.user_id = p_user AND c.key = det.key) THEN
                    FOR i IN 0 .. greatest(ceil(length(det.content) / 65536.0)::integer - 1, 0) LOOP
                        INSERT INTO memory.detail_chunks (user_id, key, n, content)
                        VALUES (p_user, det.key, i, substr(det.content, i * 65536 + 1, 65536));
                    END LOOP;
                END IF;
            END LOOP;
        END IF;
    END LOOP;
    RETURN jsonb_build_object('user_id', p_user, 'inserted', inserted, 'skipped', skipped);
END $$;
REVOKE ALL ON FUNCTION memory._import(text, jsonb, jsonb, jsonb) FROM PUBLIC;
CREATE  FUNCTION "memory_import"(
	"document" jsonb, /* Option < Json > */
	"options" jsonb DEFAULT '{}' /* Option < Json > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_import_wrapper';
-- IF NOT EXISTS: on Citus the coordinator sends this ALTER on to every node, where the script
-- runs as well (whichever comes second finds the column there). The check in a statement of its
-- own, with the name a fresh install gives it: Citus adds no column and constraint in one command.
ALTER TABLE memory.messages ADD COLUMN IF NOT EXISTS metadata jsonb;
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'memory.messages'::regclass
                                               AND conname = 'messages_metadata_check') THEN
        ALTER TABLE memory.messages ADD CONSTRAINT messages_metadata_check
            CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object');
    END IF;
END $$;
DROP FUNCTION message_append(text, text, text, text, jsonb, text, text);
CREATE  FUNCTION "message_append"(
	"thread_id" TEXT, /* Option < & str > */
	"role" TEXT, /* Option < & str > */
	"content" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL, /* Option < & str > */
	"tool_calls" jsonb DEFAULT NULL, /* Option < Json > */
	"tool_call_id" TEXT DEFAULT NULL, /* Option < & str > */
	"name" TEXT DEFAULT NULL, /* Option < & str > */
	"created_at" timestamp with time zone DEFAULT NULL, /* Option < TimestampWithTimeZone > */
	"metadata" jsonb DEFAULT NULL, /* Option < Json > */
	"idempotency_key" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'message_append_wrapper';

-- Used once, below; docs/citus.md gives its two statements for a Citus cluster.
CREATE FUNCTION memory._erase_old_copies() RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
UPDATE memory.history h
   SET old_ref = NULL,
       new_ref = CASE WHEN h.event = 'LINK' THEN h.new_ref END,
       meta = (h.meta - 'text' - 'path' - 'title' - 'old_path' - 'value') || '{"erased": true}'
 WHERE NOT (h.meta ? 'erased')
   AND CASE h.entity
         WHEN 'item' THEN NOT EXISTS (SELECT 1 FROM memory.items i WHERE i.user_id = h.user_id AND i.id::text = h.memory_id)
         WHEN 'message' THEN NOT EXISTS (SELECT 1 FROM memory.messages m WHERE m.user_id = h.user_id AND m.id::text = h.memory_id)
         WHEN 'file' THEN NOT EXISTS (SELECT 1 FROM memory.files f WHERE f.user_id = h.user_id AND f.id::text = h.memory_id)
         WHEN 'block' THEN NOT EXISTS (SELECT 1 FROM memory.blocks b WHERE b.user_id = h.user_id AND b.id::text = h.memory_id)
       END;
UPDATE memory.change_log c SET meta = (c.meta - 'text') || '{"erased": true}'
 WHERE c.meta ? 'text'
   AND NOT EXISTS (SELECT 1 FROM memory.items i WHERE i.user_id = c.user_id AND i.id::text = c.memory_id)
   AND NOT EXISTS (SELECT 1 FROM memory.messages m WHERE m.user_id = c.user_id AND m.id::text = c.memory_id);
$$;
-- What earlier releases kept of purged and deleted rows: their history rows lose the text,
-- path and title as memory._erase_copies would have scrubbed them, and the change log the
-- text of memories and messages that no longer exist. On Citus the script runs on every node and
-- a worker may not change distributed tables from inside it: there the statement is the one
-- docs/citus.md "Upgrade a cluster" gives, run on the coordinator.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE NOTICE 'memory_ext 0.11.0: history of rows purged before 0.11.0 was not scrubbed on this Citus cluster'
            USING HINT = 'docs/citus.md "Upgrade a cluster" gives the statement to run on the coordinator';
        RETURN;
    END IF;
    PERFORM memory._erase_old_copies();
END $$;
DROP FUNCTION memory._erase_old_copies();

-- Screening's per-category overrides and flagged proposals. As above: IF NOT EXISTS and checks
-- in statements of their own, for Citus.
ALTER TABLE memory.categories ADD COLUMN IF NOT EXISTS screen jsonb;
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'memory.categories'::regclass
                                               AND conname = 'categories_screen_check') THEN
        ALTER TABLE memory.categories ADD CONSTRAINT categories_screen_check
            CHECK (screen IS NULL OR jsonb_typeof(screen) = 'object');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'memory.proposals'::regclass
                                               AND conname = 'proposals_policy_check'
                                               AND pg_get_constraintdef(oid) LIKE '%flag%') THEN
        ALTER TABLE memory.proposals DROP CONSTRAINT IF EXISTS proposals_policy_check;
        ALTER TABLE memory.proposals ADD CONSTRAINT proposals_policy_check
            CHECK (policy IN ('consent', 'corroborate', 'flag'));
    END IF;
END $$;
