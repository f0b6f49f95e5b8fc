-- Import (docs/api.md "Import"): memory_import brings a memory_export document (or one converted
-- from mem0's or Letta's format by memory_core::import) into a tenant. src/ops/import.rs checks
-- who may write the tenant, screens the text, and calls memory._import as the owner.
--
-- Rows go in as they were exported, ids and times kept, the way a restore puts them back
-- (memory._restoring(): the function's row_security = off and check_function_bodies = off), so
-- the triggers leave the imported history, revisions and message numbers as they are; the BM25
-- statistics of the new memories are then added as the triggers would have. Vectors are not in
-- an export: memories, messages and files come without a model and the backfill embeds them
-- with the active one. Every row is inserted ON CONFLICT DO NOTHING: importing a document
-- again changes nothing. A row whose id is new but whose place is taken (a message number in a
-- thread the tenant already has, a block label an agent already has) fails the whole import
-- with 23505 naming the section: remap its thread or agent.

-- The sections of a memory_export document, in the order they are inserted (each after what
-- its foreign keys name), with their tables. Store texts come without vectors, as memories do:
-- the backfill embeds them (a caller's own vectors too, with the active model).
CREATE FUNCTION memory._import_sections() RETURNS TABLE (section text, tbl regclass)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    VALUES ('agents', 'memory.agents'::regclass), ('threads', 'memory.threads'), ('blocks', 'memory.blocks'),
           ('block_attachments', 'memory.block_attachments'),
           ('memories', 'memory.items'), ('relations', 'memory.relations'), ('messages', 'memory.messages'),
           ('history', 'memory.history'), ('categories', 'memory.categories'),
           ('allowlists', 'memory.allowlists'), ('checkpoints', 'memory.checkpoints'),
           ('details', 'memory.details'), ('files', 'memory.files'), ('events', 'memory.events'),
           ('proposals', 'memory.proposals'), ('store_items', 'memory.store_items'),
           ('store_vectors', 'memory.store_vectors'), ('checkpoint_steps', 'memory.checkpoint_steps'),
           ('checkpoint_blobs', 'memory.checkpoint_blobs'), ('checkpoint_writes', 'memory.checkpoint_writes'),
           ('entities', 'memory.entities'), ('entity_links', 'memory.entity_links'),
           ('entity_relations', 'memory.entity_relations'),
           ('summaries', 'memory.summaries'), ('summary_versions', 'memory.summary_versions'),
           ('settings', 'memory.settings')
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
             -- An attached block (0.13.0): the tenant's own becomes the importing tenant's; its
             -- id made as the block's was, when it is a Letta file's.
             || CASE WHEN p_section = 'block_attachments'
                     THEN jsonb_build_object('owner', CASE WHEN (r ->> 'owner') LIKE 'space:%' THEN r ->> 'owner' ELSE p_user END)
                          || CASE WHEN (r ->> 'block_id') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                                  THEN jsonb_build_object('block_id', md5(r ->> 'block_id')::uuid) ELSE '{}'::jsonb END
                     ELSE '{}'::jsonb END
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
    t_users  text[];
    t_thrs   text[];
    t_tsvs   tsvector[];
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
        -- Rows inserted, counted as the tenant's rows before and after: on Citus an INSERT ...
        -- SELECT goes through the coordinator and its row count is the rows it sent, conflicts
        -- included.
        EXECUTE format('SELECT count(*) FROM %s WHERE user_id = $1', s.tbl) INTO n USING p_user;
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM jsonb_populate_recordset(NULL::%s, $1) x ON CONFLICT DO NOTHING',
                       s.tbl, cols, vals, s.tbl) USING v_rows;
        EXECUTE format('SELECT count(*) - $2 FROM %s WHERE user_id = $1', s.tbl) INTO n USING p_user, n;
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
            -- The statistics the term trigger would have added (sql/search.sql). Read first,
            -- applied after: on Citus a function that writes, called inside a query of the
            -- tenant's shard, would run there and cannot reach the other distributed tables.
            SELECT array_agg(i.user_id), array_agg(i.thread_id), array_agg(i.tsv)
              INTO t_users, t_thrs, t_tsvs
              FROM memory.items i
             WHERE i.user_id = p_user AND i.id IN (SELECT (r ->> 'id')::uuid FROM jsonb_array_elements(v_rows) r)
               AND NOT (i.id = ANY (coalesce(pre, '{}')));
            IF t_users IS NOT NULL THEN
                PERFORM memory._apply_term_stats(t_users, t_thrs, t_tsvs, 1);
            END IF;
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
