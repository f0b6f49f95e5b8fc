-- memory_ext 0.12.0 -> 0.13.0 (ALTER EXTENSION memory_ext UPDATE TO '0.13.0')
--
-- store_search's filters (docs/api.md "Store"): a condition whose value is an array or an object
-- (`{"acl": ["alice"]}`) no longer matches the items that lack the field. memory._store_match
-- read a missing path as NULL, which bool_and skipped; it is false now, as in LangGraph's stores.
--
-- Checkpoint keys (checkpoint ids, namespaces, task ids and paths) are refused with 22023 when
-- they hold control, line-separator or invisible characters: memory._checkpoint_key.
--
-- Screening on every field (docs/api.md "Screening"): checkpoint_save's state, checkpoint_put's
-- channel values and metadata, and the json and msgpack blobs of checkpoint_put and
-- checkpoint_put_writes are screened as a message is (memory.screen_checkpoint,
-- memory.screen_blob: new).
--
-- memory_export_rows (and so memory_export) keeps a store text's vector when the caller made
-- it (model 'client'), so an import brings it back.
-- Agent tools (docs/api.md "Agent tools"): an agent's file tools may write the directories the
-- application allows it: memory.agents.file_paths, set by memory_file_allowlist (new).
--
-- Everything else of 0.13.0 is in the library (CHANGELOG.md).

-- Guarded: on Citus the coordinator sends the ALTER on to every node, where the script runs as
-- well.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'memory.agents'::regclass
                   AND attname = 'file_paths' AND NOT attisdropped) THEN
        ALTER TABLE memory.agents ADD COLUMN file_paths text[];
    END IF;
END $$;

-- Relations between entities (docs/design.md "Entities"): what memories state about how two
-- entities relate, kept as long as the memory is. A database upgraded from 0.12.0 has none
-- until its memories are written again (the resolver reads them as memories are written).
CREATE TABLE memory.entity_relations (
    user_id    text NOT NULL,
    subject_id uuid NOT NULL,
    relation   text NOT NULL CHECK (relation <> '' AND length(relation) <= 60),
    object_id  uuid NOT NULL,
    item_id    uuid NOT NULL,
    PRIMARY KEY (user_id, subject_id, relation, object_id, item_id),
    FOREIGN KEY (user_id, subject_id) REFERENCES memory.entities ON DELETE CASCADE,
    FOREIGN KEY (user_id, object_id) REFERENCES memory.entities ON DELETE CASCADE,
    FOREIGN KEY (user_id, item_id) REFERENCES memory.items ON DELETE CASCADE
);
CREATE INDEX entity_relations_object_idx ON memory.entity_relations (user_id, object_id);
CREATE INDEX entity_relations_item_idx ON memory.entity_relations (user_id, item_id);
ALTER TABLE memory.entity_relations ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.entity_relations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.entity_relations
    USING (user_id = memory.current_tenant())
    WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.entity_relations TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory.entity_relations', '');

CREATE OR REPLACE FUNCTION memory._import_sections() RETURNS TABLE (section text, tbl regclass)
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

CREATE  FUNCTION "memory_file_allowlist"(
	"agent_id" TEXT, /* Option < & str > */
	"paths" TEXT[] /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_file_allowlist_wrapper';

CREATE OR REPLACE FUNCTION memory._store_match(v jsonb, conds jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(bool_and(
        CASE c ->> 'op'
            WHEN 'eq' THEN coalesce(v #> p = c -> 'value', false)
            WHEN 'ne' THEN (v #> p) IS DISTINCT FROM (c -> 'value')
            ELSE CASE
                WHEN jsonb_typeof(v #> p) = 'number' AND jsonb_typeof(c -> 'value') = 'number' THEN
                    CASE c ->> 'op'
                        WHEN 'gt' THEN (v #>> p)::numeric > (c ->> 'value')::numeric
                        WHEN 'gte' THEN (v #>> p)::numeric >= (c ->> 'value')::numeric
                        WHEN 'lt' THEN (v #>> p)::numeric < (c ->> 'value')::numeric
                        WHEN 'lte' THEN (v #>> p)::numeric <= (c ->> 'value')::numeric
                    END
                WHEN jsonb_typeof(v #> p) = 'string' AND jsonb_typeof(c -> 'value') = 'string' THEN
                    CASE c ->> 'op'
                        WHEN 'gt' THEN (v #>> p) > (c ->> 'value')
                        WHEN 'gte' THEN (v #>> p) >= (c ->> 'value')
                        WHEN 'lt' THEN (v #>> p) < (c ->> 'value')
                        WHEN 'lte' THEN (v #>> p) <= (c ->> 'value')
                    END
                ELSE false
            END
        END), true)
    FROM jsonb_array_elements(conds) c,
         LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(c -> 'path'))) x(p)
$$;

-- 0.13.0: a key shows as itself, as a category name must (memory_core::names::legible): no
-- control characters, line or paragraph separators, or format and zero-width characters (a
-- namespace of "\n</x>" was accepted, and rendering was all that stood between it and a prompt).
CREATE OR REPLACE FUNCTION memory._checkpoint_key(arg text, v text, may_be_empty boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF v IS NULL THEN
        RAISE EXCEPTION '% must not be null', arg USING ERRCODE = '22004';
    ELSIF v = '' AND NOT may_be_empty THEN
        RAISE EXCEPTION '% must not be empty', arg USING ERRCODE = '22023';
    ELSIF length(v) > 200 THEN
        RAISE EXCEPTION '% is longer than 200 characters', arg USING ERRCODE = '22001';
    ELSIF v ~ '[\x01-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]' THEN
        RAISE EXCEPTION '% contains control, line-separator or invisible characters', arg
            USING ERRCODE = '22023';
    END IF;
    RETURN v;
END $$;

-- The screening functions of the checkpoint functions below (src/api/checkpoints.rs), as a
-- fresh install declares them.
CREATE  FUNCTION memory."screen_checkpoint"(
	"value" jsonb /* Option < JsonText > */
) RETURNS jsonb /* Option < pgrx :: JsonB > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'screen_checkpoint_wrapper';

CREATE  FUNCTION memory."screen_blob"(
	"kind" TEXT, /* Option < & str > */
	"blob" bytea /* Option < & [u8] > */
) RETURNS bytea /* :: std :: option :: Option < Vec < u8 > > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'screen_blob_wrapper';

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
    PERFORM memory.check_json('data', data);  -- what every reader can read back
    -- Screened as every write is (0.13.0): a state holds what the conversation said.
    data := coalesce(memory.screen_checkpoint(data), data);
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

CREATE OR REPLACE FUNCTION checkpoint_put(thread_id text, checkpoint_ns text, checkpoint_id text,
                               parent_checkpoint_id text, checkpoint jsonb, metadata jsonb DEFAULT '{}',
                               channels text[] DEFAULT '{}', versions text[] DEFAULT '{}',
                               types text[] DEFAULT '{}', blobs bytea[] DEFAULT '{}',
                               user_id text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u   text := memory.resolve_tenant(user_id);
    t   text := memory.checkpoint_thread(thread_id);
    ns  text := memory._checkpoint_key('checkpoint_ns', checkpoint_ns, true);
    id  text := memory._checkpoint_key('checkpoint_id', checkpoint_id, false);
    n   integer := coalesce(cardinality(channels), 0);
BEGIN
    IF checkpoint IS NULL THEN
        RAISE EXCEPTION 'checkpoint must not be null' USING ERRCODE = '22004';
    ELSIF jsonb_typeof(checkpoint) <> 'object' THEN
        RAISE EXCEPTION 'checkpoint must be a JSON object' USING ERRCODE = '22023';
    ELSIF metadata IS NOT NULL AND jsonb_typeof(metadata) <> 'object' THEN
        RAISE EXCEPTION 'metadata must be a JSON object' USING ERRCODE = '22023';
    ELSIF parent_checkpoint_id = '' THEN
        RAISE EXCEPTION 'parent_checkpoint_id must not be empty (NULL for none)' USING ERRCODE = '22023';
    ELSIF n <> coalesce(cardinality(versions), 0) OR n <> coalesce(cardinality(types), 0)
          OR n <> coalesce(cardinality(blobs), 0) THEN
        RAISE EXCEPTION 'channels, versions, types and blobs must have the same length' USING ERRCODE = '22023';
    ELSIF array_position(channels, NULL) IS NOT NULL OR array_position(versions, NULL) IS NOT NULL
          OR array_position(types, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'channels, versions and types must not hold NULL' USING ERRCODE = '22004';
    END IF;
    IF parent_checkpoint_id IS NOT NULL THEN
        PERFORM memory._checkpoint_key('parent_checkpoint_id', parent_checkpoint_id, true);
    END IF;
    PERFORM memory.checkpoint_size(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)
                                   + coalesce((SELECT sum(length(b)) FROM unnest(blobs) b), 0));
    PERFORM memory.check_json('checkpoint', checkpoint);
    PERFORM memory.check_json('metadata', metadata);
    -- Screened as every write is (0.13.0): the documents, and the blobs LangGraph can read back
    -- without running code (json, msgpack: memory_core::blob), where a graph's messages live.
    -- In the checkpoint, its channel values only: the rest is the framework's bookkeeping (ids,
    -- versions, timestamps), which the detectors would only misread.
    IF checkpoint ? 'channel_values' THEN
        checkpoint := jsonb_set(checkpoint, '{channel_values}',
                                coalesce(memory.screen_checkpoint(checkpoint -> 'channel_values'),
                                         checkpoint -> 'channel_values'));
    END IF;
    metadata := coalesce(memory.screen_checkpoint(metadata), metadata);
    -- Apart from the INSERT: Citus then plans that as it did before.
    blobs := ARRAY(SELECT coalesce(memory.screen_blob(x.ty, x.bl), x.bl)
                   FROM unnest(types, blobs) WITH ORDINALITY x(ty, bl, o) ORDER BY x.o);
    INSERT INTO memory.checkpoint_blobs AS b (user_id, thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT u, t, ns, x.c, x.v, x.ty, x.bl FROM unnest(channels, versions, types, blobs) x(c, v, ty, bl)
    ON CONFLICT ON CONSTRAINT checkpoint_blobs_pkey DO NOTHING;
    INSERT INTO memory.checkpoint_steps AS s (user_id, thread_id, checkpoint_ns, checkpoint_id,
                                              parent_checkpoint_id, checkpoint, metadata)
    VALUES (u, t, ns, id, parent_checkpoint_id, checkpoint, coalesce(metadata, '{}'))
    ON CONFLICT ON CONSTRAINT checkpoint_steps_pkey
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata;
    RETURN jsonb_build_object('thread_id', t, 'checkpoint_ns', ns, 'checkpoint_id', id);
END
$$;

CREATE OR REPLACE FUNCTION checkpoint_put_writes(thread_id text, checkpoint_ns text, checkpoint_id text,
                                      task_id text, task_path text, idx integer[], channels text[],
                                      types text[], blobs bytea[], replace boolean DEFAULT false,
                                      user_id text DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u    text := memory.resolve_tenant(user_id);
    t    text := memory.checkpoint_thread(thread_id);
    ns   text := memory._checkpoint_key('checkpoint_ns', checkpoint_ns, true);
    id   text := memory._checkpoint_key('checkpoint_id', checkpoint_id, false);
    task text := memory._checkpoint_key('task_id', task_id, true);
    path text := memory._checkpoint_key('task_path', coalesce(task_path, ''), true);
    n    integer := coalesce(cardinality(idx), 0);
    done integer;
BEGIN
    IF n <> coalesce(cardinality(channels), 0) OR n <> coalesce(cardinality(types), 0)
       OR n <> coalesce(cardinality(blobs), 0) THEN
        RAISE EXCEPTION 'idx, channels, types and blobs must have the same length' USING ERRCODE = '22023';
    ELSIF array_position(idx, NULL) IS NOT NULL OR array_position(channels, NULL) IS NOT NULL
          OR array_position(blobs, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'idx, channels and blobs must not hold NULL' USING ERRCODE = '22004';
    ELSIF (SELECT count(DISTINCT i) FROM unnest(idx) i) <> n THEN
        RAISE EXCEPTION 'idx must not repeat' USING ERRCODE = '22023';
    END IF;
    PERFORM memory.checkpoint_size(coalesce((SELECT sum(length(b)) FROM unnest(blobs) b), 0));
    -- Screened as every write is (0.13.0; memory_core::blob), apart from the INSERTs below.
    blobs := ARRAY(SELECT coalesce(memory.screen_blob(x.ty, x.bl), x.bl)
                   FROM unnest(types, blobs) WITH ORDINALITY x(ty, bl, o) ORDER BY x.o);
    -- Two statements, not one with `DO UPDATE ... WHERE replace`: Citus sends an INSERT ... SELECT's
    -- ON CONFLICT clause to the workers without the types of the parameters in it.
    IF replace THEN
        INSERT INTO memory.checkpoint_writes AS w (user_id, thread_id, checkpoint_ns, checkpoint_id, task_id,
                                                   task_path, idx, channel, type, blob)
        SELECT u, t, ns, id, task, path, x.i, x.c, x.ty, x.bl FROM unnest(idx, channels, types, blobs) x(i, c, ty, bl)
        ON CONFLICT ON CONSTRAINT checkpoint_writes_pkey
        DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob;
    ELSE
        INSERT INTO memory.checkpoint_writes AS w (user_id, thread_id, checkpoint_ns, checkpoint_id, task_id,
                                                   task_path, idx, channel, type, blob)
        SELECT u, t, ns, id, task, path, x.i, x.c, x.ty, x.bl FROM unnest(idx, channels, types, blobs) x(i, c, ty, bl)
        ON CONFLICT ON CONSTRAINT checkpoint_writes_pkey DO NOTHING;
    END IF;
    GET DIAGNOSTICS done = ROW_COUNT;
    RETURN done;
END
$$;

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
        UNION ALL
        SELECT 15, 'store_items', to_jsonb(s) - 'user_id', row_number() OVER (ORDER BY s.namespace, s.key)
        FROM memory.store_items s WHERE s.user_id = tenant
        UNION ALL
        -- A vector the caller computed (model 'client') goes with its text (0.13.0): nothing
        -- here could make it again. The others the backfill makes with the active model.
        SELECT 16, 'store_vectors', to_jsonb(v) - 'user_id'
               - CASE WHEN v.embedding_model = 'client' THEN '{}'::text[] ELSE '{embedding,embedding_model}'::text[] END,
               row_number() OVER (ORDER BY v.namespace, v.key, v.field)
        FROM memory.store_vectors v WHERE v.user_id = tenant
        UNION ALL
        SELECT 17, 'checkpoint_steps', to_jsonb(c) - 'user_id',
               row_number() OVER (ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id)
        FROM memory.checkpoint_steps c WHERE c.user_id = tenant
        UNION ALL
        SELECT 18, 'checkpoint_blobs', to_jsonb(b) - 'user_id',
               row_number() OVER (ORDER BY b.thread_id, b.checkpoint_ns, b.channel, b.version)
        FROM memory.checkpoint_blobs b WHERE b.user_id = tenant
        UNION ALL
        SELECT 19, 'checkpoint_writes', to_jsonb(w) - 'user_id',
               row_number() OVER (ORDER BY w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx)
        FROM memory.checkpoint_writes w WHERE w.user_id = tenant
        UNION ALL
        SELECT 20, 'entities', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.created_at, e.id)
        FROM memory.entities e WHERE e.user_id = tenant
        UNION ALL
        SELECT 21, 'entity_links', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.entity_id, l.item_id)
        FROM memory.entity_links l WHERE l.user_id = tenant
        UNION ALL
        SELECT 22, 'entity_relations', to_jsonb(r) - 'user_id',
               row_number() OVER (ORDER BY r.subject_id, r.relation, r.object_id, r.item_id)
        FROM memory.entity_relations r WHERE r.user_id = tenant
        UNION ALL
        -- Blocks attached to the tenant's agents (0.13.0, block_attach): the tenant's own blocks
        -- and its spaces' (an import into another tenant keeps only its own, memory._import_row).
        SELECT 23, 'block_attachments', to_jsonb(a) - 'user_id',
               row_number() OVER (ORDER BY a.agent_id, a.attached_at, a.block_id)
        FROM memory.block_attachments a WHERE a.user_id = tenant
        UNION ALL
        -- Summaries the worker keeps (0.13.0) and their versions.
        SELECT 24, 'summaries', to_jsonb(s) - 'user_id', row_number() OVER (ORDER BY s.name)
        FROM memory.summaries s WHERE s.user_id = tenant
        UNION ALL
        SELECT 25, 'summary_versions', to_jsonb(v) - 'user_id', row_number() OVER (ORDER BY v.name, v.version)
        FROM memory.summary_versions v WHERE v.user_id = tenant
        UNION ALL
        -- The tenant's settings (0.13.0): its default language.
        SELECT 26, 'settings', to_jsonb(s) - 'user_id', 1
        FROM memory.settings s WHERE s.user_id = tenant
    ) x
    ORDER BY o, n;
END
$$;

-------------------------------------------------------------------------------- migrating
-- memory_export takes the format to write (docs/migrating.md "Leaving").
DROP FUNCTION memory_export(text);
CREATE  FUNCTION "memory_export"(
	"user_id" TEXT, /* Option < & str > */
	"format" TEXT DEFAULT 'memory_ext' /* Option < & str > */
) RETURNS jsonb /* crate :: pg :: json :: JsonText */
STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_export_wrapper';

-------------------------------------------------------------------------------- languages
-- Keyword search reads each text in its language (docs/api.md "Languages").
-- Languages (docs/api.md "Languages", crates/memory_core/src/language.rs): a text's language
-- (an ISO 639-1 code, or NULL when unknown) decides how keyword search reads it.
-- The Snowball configuration of a language; 'simple' (lower case, no stemming, no stop words)
-- for a language Postgres has none for; 'english' for no language, what every text got before
-- 0.13.0. Only configurations every supported PostgreSQL ships (15, 17, 18). A searched CASE,
-- not `CASE language WHEN ...`: Citus deparses the inlined simple form into "text = boolean".
CREATE FUNCTION memory.ts_config(language text) RETURNS regconfig
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE WHEN language IS NULL THEN 'english'::regconfig
        WHEN language = 'ar' THEN 'arabic'::regconfig
        WHEN language = 'ca' THEN 'catalan'::regconfig
        WHEN language = 'da' THEN 'danish'::regconfig
        WHEN language = 'de' THEN 'german'::regconfig
        WHEN language = 'el' THEN 'greek'::regconfig
        WHEN language = 'en' THEN 'english'::regconfig
        WHEN language = 'es' THEN 'spanish'::regconfig
        WHEN language = 'eu' THEN 'basque'::regconfig
        WHEN language = 'fi' THEN 'finnish'::regconfig
        WHEN language = 'fr' THEN 'french'::regconfig
        WHEN language = 'ga' THEN 'irish'::regconfig
        WHEN language = 'hi' THEN 'hindi'::regconfig
        WHEN language = 'hu' THEN 'hungarian'::regconfig
        WHEN language = 'hy' THEN 'armenian'::regconfig
        WHEN language = 'id' THEN 'indonesian'::regconfig
        WHEN language = 'it' THEN 'italian'::regconfig
        WHEN language = 'lt' THEN 'lithuanian'::regconfig
        WHEN language = 'nb' THEN 'norwegian'::regconfig
        WHEN language = 'ne' THEN 'nepali'::regconfig
        WHEN language = 'nl' THEN 'dutch'::regconfig
        WHEN language = 'nn' THEN 'norwegian'::regconfig
        WHEN language = 'no' THEN 'norwegian'::regconfig
        WHEN language = 'pt' THEN 'portuguese'::regconfig
        WHEN language = 'ro' THEN 'romanian'::regconfig
        WHEN language = 'ru' THEN 'russian'::regconfig
        WHEN language = 'sr' THEN 'serbian'::regconfig
        WHEN language = 'sv' THEN 'swedish'::regconfig
        WHEN language = 'ta' THEN 'tamil'::regconfig
        WHEN language = 'tr' THEN 'turkish'::regconfig
        ELSE 'simple'::regconfig END;
END;
-- The text as the configurations should see it: runs of scripts written without spaces
-- (Chinese, Japanese, Thai, ...) as overlapping character bigrams, accents folded for the
-- languages that want it (memory_core::language::prepare). C, declared here because the
-- generated columns below need it before pgrx creates the extension's functions.
CREATE FUNCTION memory.text_prepare(language text, body text) RETURNS text
IMMUTABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'text_prepare_wrapper';
-- A text's lexemes in its language: every full-text column and every query goes through it
-- (a query in its own language, src/pg/fulltext.rs). BEGIN ATOMIC for the reason given at
-- memory.tenant_tsvector.
CREATE FUNCTION memory.text_tsvector(language text, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT to_tsvector(memory.ts_config(language), memory.text_prepare(language, body));
END;
-- The language of a text written without one: detected when detection is sure, else NULL
-- (the tenant's default then applies: memory.settings.language).
CREATE FUNCTION memory.detect_language(body text) RETURNS text
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'detect_language_wrapper';

CREATE TABLE memory.settings (
    user_id  text NOT NULL PRIMARY KEY CHECK (user_id <> ''),
    language text CHECK (language ~ '^[a-z]{2}$')
);
ALTER TABLE memory.settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.settings
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.settings TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory.settings', '');

-- The full-text columns are generated from the language now: dropped and added again (their
-- expression cannot be changed in place on PostgreSQL 15 and 16). Rows written before keep
-- language NULL, read as English as before; only texts in scripts written without spaces get
-- new lexemes (their bigrams), and the term statistics follow for those rows: their old
-- lexemes are taken out before the column goes, their new ones put in after.
DO $$
DECLARE
    u text[]; t text[]; v tsvector[];
BEGIN
    -- On Citus the script runs on every node, and the new functions are not on the workers yet
    -- when the coordinator's statements reach their shards: the statistics are left as they are
    -- there (a few CJK texts' counts; docs/citus.md "Upgrade a cluster").
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RETURN;
    END IF;
    SELECT array_agg(user_id), array_agg(thread_id), array_agg(tsv) INTO u, t, v
    FROM memory.items WHERE memory.text_prepare(NULL, text) <> text;
    IF u IS NOT NULL THEN
        PERFORM memory._apply_term_stats(u, t, v, -1);
    END IF;
END $$;
-- 0.13.0's full-text columns by language and their triggers (docs/api.md "Languages"), for a
-- database upgraded from 0.12.0: its tsv columns are dropped and made again from `language`,
-- with their indexes (their expression cannot be changed in place on PostgreSQL 15 and 16). The
-- upgrade calls it on one node. On Citus the coordinator runs the upgrade before the workers
-- have the new functions that the columns call, so memory_citus_distribute() calls it there,
-- after ALTER EXTENSION (docs/citus.md "Upgrade a cluster"); one column or constraint per
-- command (Citus sends no two in one), the check named as a fresh install names it. Does
-- nothing where the columns are there (a fresh install, a second call).
CREATE FUNCTION memory._language_columns() RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    u text[]; t text[]; v tsvector[];
    citus boolean := EXISTS (SELECT FROM pg_extension WHERE extname = 'citus');
BEGIN
    IF EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'memory.items'::regclass
                                          AND attname = 'language' AND NOT attisdropped) THEN
        RETURN false;
    END IF;
    IF citus THEN
        -- As memory_citus_distribute sets it: triggers on distributed tables (docs/citus.md).
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    END IF;
    EXECUTE $s$ALTER TABLE memory.items DROP COLUMN tsv$s$;
    EXECUTE $s$ALTER TABLE memory.items ADD COLUMN language text$s$;
    EXECUTE $s$ALTER TABLE memory.items ADD CONSTRAINT items_language_check CHECK (language ~ '^[a-z]{2}$')$s$;
    EXECUTE $s$ALTER TABLE memory.items ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(memory.text_tsvector(language, left(text, 100000)), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'B') ||
        memory.tenant_tsvector(user_id)) STORED$s$;
    EXECUTE $s$CREATE INDEX items_tsv_idx ON memory.items USING gin (tsv)$s$;
    PERFORM memory._name_partition_indexes('memory.items_tsv_idx');
    IF NOT citus THEN
        SELECT array_agg(user_id), array_agg(thread_id), array_agg(tsv) INTO u, t, v
        FROM memory.items WHERE memory.text_prepare(NULL, text) <> text;
        IF u IS NOT NULL THEN
            PERFORM memory._apply_term_stats(u, t, v, 1);
        END IF;
    END IF;
    EXECUTE $s$ALTER TABLE memory.messages DROP COLUMN tsv$s$;
    EXECUTE $s$ALTER TABLE memory.messages ADD COLUMN language text$s$;
    EXECUTE $s$ALTER TABLE memory.messages ADD CONSTRAINT messages_language_check CHECK (language ~ '^[a-z]{2}$')$s$;
    EXECUTE $s$ALTER TABLE memory.messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (memory.text_tsvector(language, left(content, 100000))
                                                 || memory.tenant_tsvector(user_id)) STORED$s$;
    EXECUTE $s$CREATE INDEX messages_tsv_idx ON memory.messages USING gin (tsv)$s$;
    EXECUTE $s$ALTER TABLE memory.files DROP COLUMN tsv$s$;
    EXECUTE $s$ALTER TABLE memory.files ADD COLUMN language text$s$;
    EXECUTE $s$ALTER TABLE memory.files ADD CONSTRAINT files_language_check CHECK (language ~ '^[a-z]{2}$')$s$;
    EXECUTE $s$ALTER TABLE memory.files ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(memory.text_tsvector(language, coalesce(title, '') || ' ' || translate(path, '/_.-', '    ')), 'A') ||
        memory.text_tsvector(language, left(content, 100000)) ||
        memory.tenant_tsvector(user_id)) STORED$s$;
    EXECUTE $s$CREATE INDEX files_tsv_idx ON memory.files USING gin (tsv)$s$;
    EXECUTE $s$CREATE TRIGGER items_language BEFORE INSERT OR UPDATE OF text, language ON memory.items FOR EACH ROW
EXECUTE FUNCTION memory._set_language('text')$s$;
    EXECUTE $s$CREATE TRIGGER messages_language BEFORE INSERT OR UPDATE OF content, language ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._set_language('content')$s$;
    EXECUTE $s$CREATE TRIGGER files_language BEFORE INSERT ON memory.files FOR EACH ROW
EXECUTE FUNCTION memory._set_language('content')$s$;
    RETURN true;
END $fn$;
REVOKE ALL ON FUNCTION memory._language_columns() FROM PUBLIC;


-- A row's language when its writer gave none (docs/api.md "Languages"): detected from its text
-- when detection is sure (memory.detect_language), else the tenant's default
-- (memory.settings.language), else the language it usually writes in (memory._usual_language),
-- else NULL. An update that changes the text and not the language
-- detects again, keeping the old language when detection is not sure. TG_ARGV[0] names the
-- text column ('text' for memories, 'content' for messages and files). A restore keeps what
-- was dumped.
CREATE FUNCTION memory._set_language() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    body text;
BEGIN
    IF memory._restoring() THEN
        RETURN NEW;
    END IF;
    IF TG_ARGV[0] = 'text' THEN
        body := NEW.text;
        IF TG_OP = 'UPDATE' AND (NEW.text IS NOT DISTINCT FROM OLD.text OR NEW.language IS DISTINCT FROM OLD.language) THEN
            RETURN NEW;
        END IF;
    ELSE
        body := NEW.content;
        IF TG_OP = 'UPDATE' AND (NEW.content IS NOT DISTINCT FROM OLD.content OR NEW.language IS DISTINCT FROM OLD.language) THEN
            RETURN NEW;
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        NEW.language := coalesce(memory.detect_language(body), OLD.language);
    ELSIF NEW.language IS NULL THEN
        NEW.language := memory.detect_language(body);
        -- On Citus this runs on a shard, where reading another distributed table is refused:
        -- there memory_write reads the default itself (src/ops/write.rs `language_of`), and a
        -- message or file takes only what detection says.
        IF NEW.language IS NULL AND NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
            NEW.language := coalesce((SELECT s.language FROM memory.settings s WHERE s.user_id = NEW.user_id),
                                     memory._usual_language(NEW.user_id));
        END IF;
    END IF;
    RETURN NEW;
END $$;



-- The language a tenant usually writes in: the most common one among its 25 most recently
-- updated memories (items_updated_idx), NULL when none has one. What a text or a query whose
-- language detection cannot tell is read in when the tenant has set no default: a German
-- tenant's "Wo wohnt Anna?" is read in German without anyone configuring it.
-- PL/pgSQL, not SQL: Citus plans a distributed query in an SQL function with parameters not at
-- all ("could not create distributed plan"), in PL/pgSQL with the values bound.
CREATE FUNCTION memory._usual_language(p_user text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    found text;
BEGIN
    SELECT r.language INTO found
    FROM (SELECT i.language FROM memory.items i WHERE i.user_id = p_user ORDER BY i.updated_at DESC LIMIT 25) r
    WHERE r.language IS NOT NULL
    GROUP BY r.language ORDER BY count(*) DESC, r.language LIMIT 1;
    RETURN found;
END $$;

-- A query's lexemes (docs/api.md "Languages"): the query read in its own language (p_language,
-- when detection was sure) and in the tenant's default (else the language it usually writes
-- in, memory._usual_language; English without either), distinct and
-- sorted; every keyword path takes its terms from here (src/pg/fulltext.rs, memory_query's
-- sql/queries/search_terms.sql). A text matches in its own language (memory.text_tsvector).
-- German: Snowball keeps the -t of a weak verb's past ("wohnte" -> wohnt, "wohnen" -> wohn), so
-- a German reading also asks for each stem with and without a final t. Compounds (German,
-- Dutch, the Scandinavian languages, Finnish) are split and found against the tenant's own
-- words (memory.lexicon), not a dictionary: see the comments below.
CREATE FUNCTION memory.query_lexemes(p_user text, p_query text, p_language text,
                                     p_tenant_language text DEFAULT NULL) RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tenant_language text;
    out text[];
BEGIN
    IF p_tenant_language IS NOT NULL THEN
        -- As the caller read it for its statement ('' for none; src/pg/fulltext.rs).
        tenant_language := nullif(p_tenant_language, '');
    ELSE
        -- Read first, on its own (PL/pgSQL for Citus, as memory._usual_language).
        SELECT s.language INTO tenant_language FROM memory.settings s WHERE s.user_id = p_user;
        IF tenant_language IS NULL THEN
            tenant_language := memory._usual_language(p_user);
        END IF;
    END IF;
    WITH l AS (
        SELECT u.lexeme, v.lang
        FROM (VALUES (p_language), (tenant_language)) v(lang),
             LATERAL unnest(memory.text_tsvector(v.lang, p_query)) u
    ), e AS (
        SELECT lexeme AS x, lang FROM l
        UNION ALL SELECT lexeme || 't', lang FROM l WHERE lang = 'de' AND lexeme !~ 't$'
        UNION ALL SELECT left(lexeme, -1), lang FROM l WHERE lang = 'de' AND lexeme ~ '...t$'
    ), c AS (
        -- Languages that write compounds as one word (0.13.0): the compounds the tenant wrote
        -- whose head is a query word ("studio" finds "tanzstudio"; the head carries a
        -- compound's meaning, so "tanz" does not), the eight it wrote most.
        SELECT e.x FROM e WHERE e.lang IN ('de', 'nl', 'sv', 'da', 'no', 'nb', 'fi') AND length(e.x) >= 4
    )
    SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') INTO out
    FROM (SELECT x FROM e
          UNION ALL
          SELECT k.lexeme FROM c, LATERAL (
              SELECT w.lexeme FROM memory.lexicon w
              WHERE w.user_id = p_user AND w.df > 0 AND length(w.lexeme) >= length(c.x) + 3
                AND reverse(w.lexeme) LIKE replace(replace(replace(reverse(c.x), '\', '\\'), '%', '\%'), '_', '\_') || '%'
              ORDER BY w.df DESC, w.lexeme LIMIT 8) k
          UNION ALL
          -- A query compound the tenant never wrote, split where its head (a tail of four
          -- letters or more) is a word the tenant wrote: "tanzstudio" finds "studio", and
          -- "tanz" too when the tenant wrote it (a linking s or es before the head dropped).
          SELECT p.part FROM c
          CROSS JOIN LATERAL generate_series(4, length(c.x) - 4) i
          CROSS JOIN LATERAL (VALUES (left(c.x, i)), (regexp_replace(left(c.x, i), 'e?s$', '')), (right(c.x, -i))) p(part)
          WHERE NOT EXISTS (SELECT 1 FROM memory.lexicon w WHERE w.user_id = p_user AND w.lexeme = c.x AND w.df > 0)
            AND EXISTS (SELECT 1 FROM memory.lexicon w WHERE w.user_id = p_user AND w.lexeme = right(c.x, -i) AND w.df > 0)
            AND length(p.part) >= 4
            AND EXISTS (SELECT 1 FROM memory.lexicon w WHERE w.user_id = p_user AND w.lexeme = p.part AND w.df > 0)) y;
    RETURN out;
END $$;

-- The tenant's words by their ending, for compounds (sql/search.sql); one statement per
-- EXECUTE with IF NOT EXISTS, as the refine indexes below (their comment says why).
DO $$
BEGIN
    EXECUTE $s$CREATE INDEX IF NOT EXISTS lexicon_ending_idx ON memory.lexicon (user_id, reverse(lexeme) text_pattern_ops)$s$;
END $$;

-- The full-text columns by language, on one node now; on Citus by memory_citus_distribute()
-- after ALTER EXTENSION (memory._language_columns says why).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._language_columns();
    END IF;
END $$;

-------------------------------------------------------------------------------- change feed

-- The change feed (sql/changes.sql, where the reasons are): its table and epoch, kept out of
-- pg_dump's output (so, unlike the other tables, not marked here), and the triggers that feed
-- it (on Citus made by memory_citus_distribute() after the upgrade). Changes made before the
-- upgrade are not in it.
CREATE TABLE memory.feed (
    one    boolean NOT NULL DEFAULT true PRIMARY KEY CHECK (one),
    epoch  text    NOT NULL,
    secret bytea   NOT NULL
);
INSERT INTO memory.feed (epoch, secret)
VALUES (left(md5(gen_random_uuid()::text), 8), decode(md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text), 'hex'));
REVOKE ALL ON memory.feed FROM PUBLIC;

CREATE TABLE memory.changes (
    user_id  text        NOT NULL,
    xid      xid8        NOT NULL DEFAULT pg_current_xact_id(),
    seq      bigint      GENERATED ALWAYS AS IDENTITY,
    entity   text        NOT NULL CHECK (entity IN ('memory', 'block', 'message', 'file', 'store_item', 'proposal')),
    id       text        NOT NULL,
    op       text        NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
    at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, xid, seq)
);
-- An object's changes, counted into its revision as the feed is read (not as it is written: on
-- Citus a trigger on a shard may not read another distributed table, docs/citus.md).
CREATE INDEX changes_object_idx ON memory.changes (user_id, entity, id, xid, seq);
-- The worker's pruning (memory_ext.changes_days).
CREATE INDEX changes_at_idx ON memory.changes (at);

-- The epoch memory_changes writes into its cursors.
CREATE FUNCTION memory._feed_epoch() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT epoch FROM memory.feed
$$;
GRANT EXECUTE ON FUNCTION memory._feed_epoch() TO PUBLIC;

-- The tag a tenant's (or space's) notifications carry: 16 hex digits of SHA-256 over the
-- feed's secret and the owner. A listener learns its own tags from memory_changes and keeps the
-- notifications that carry them; it cannot compute another tenant's tag from the tenant's name
-- (role names, user ids are often guessable), so the shared channel tells it nothing of others
-- but that something changed. memory._change repeats this expression inline (a SQL function
-- is planned at every call): change both together.
CREATE FUNCTION memory._owner_tag(p_owner text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT left(encode(sha256(secret || convert_to(p_owner, 'UTF8')), 'hex'), 16) FROM memory.feed
$$;
REVOKE ALL ON FUNCTION memory._owner_tag(text) FROM PUBLIC;

-- Records one change and notifies. NOTIFY folds identical payloads of one transaction into
-- one, so a transaction that changes a thousand memories of a tenant sends that tenant one
-- notification, at commit, and none if it rolls back. Not on Citus (pg_dist_partition is its
-- catalog): a shard's write may be part of a two-phase commit, which cannot carry a NOTIFY
-- ("cannot PREPARE a transaction that has executed ... NOTIFY"), docs/citus.md.
CREATE FUNCTION memory._change(p_user text, p_entity text, p_id text, p_op text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO memory.changes (user_id, entity, id, op) VALUES (p_user, p_entity, p_id, p_op);
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        -- memory._owner_tag's expression, written here so that its plan is kept with this
        -- function's (a SQL function is parsed and planned at every call: two a write).
        PERFORM pg_notify('memory_ext_changes',
                          json_build_object('owner', (SELECT left(encode(sha256(secret || convert_to(p_user, 'UTF8')), 'hex'), 16)
                                                      FROM memory.feed),
                                            'xid', pg_current_xact_id()::text)::text);
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._change(text, text, text, text) FROM PUBLIC;

-- Memories, blocks, files, store items and message edits: from their history rows. A history
-- row written while restoring a dump is not a change (memory._restoring, sql/triggers.sql).
CREATE FUNCTION memory._history_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._change(
        NEW.user_id,
        CASE NEW.entity WHEN 'item' THEN 'memory' WHEN 'store' THEN 'store_item' ELSE NEW.entity END,
        NEW.memory_id,
        CASE
            WHEN NEW.event = 'ADD' THEN 'insert'
            WHEN NEW.event IN ('DELETE', 'TTL', 'PURGE') THEN 'delete'
            WHEN NEW.event = 'MERGE' AND coalesce(NEW.meta->>'state_to', 'active') NOT IN ('active', 'superseded') THEN 'delete'
            ELSE 'update'
        END);
    RETURN NULL;
END $$;

-- New messages (their edits and deletions come through history).
CREATE FUNCTION memory._message_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._change(NEW.user_id, 'message', NEW.id::text, 'insert');
    RETURN NULL;
END $$;

-- Consent proposals: made, decided, removed.
CREATE FUNCTION memory._proposal_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p memory.proposals := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._change(p.user_id, 'proposal', p.id::text, lower(TG_OP));
    RETURN NULL;
END $$;

-- The triggers that feed it. A function, not plain statements, for a cluster upgraded from
-- 0.12.0: on Citus the coordinator runs the upgrade before the workers have the functions
-- above, so memory_citus_distribute() makes them there afterwards (src/ops/citus.rs), as it
-- makes the language columns; on one node the upgrade calls it. Does nothing where they are.
CREATE FUNCTION memory._change_triggers() RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memory.history'::regclass AND tgname = 'history_change') THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        -- As memory_citus_distribute sets it: triggers on distributed tables (docs/citus.md).
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    END IF;
    EXECUTE $s$CREATE TRIGGER history_change AFTER INSERT ON memory.history FOR EACH ROW
               EXECUTE FUNCTION memory._history_change()$s$;
    EXECUTE $s$CREATE TRIGGER messages_change AFTER INSERT ON memory.messages FOR EACH ROW
               EXECUTE FUNCTION memory._message_change()$s$;
    EXECUTE $s$CREATE TRIGGER proposals_change AFTER INSERT OR UPDATE OR DELETE ON memory.proposals FOR EACH ROW
               EXECUTE FUNCTION memory._proposal_change()$s$;
    RETURN true;
END $fn$;
REVOKE ALL ON FUNCTION memory._change_triggers() FROM PUBLIC;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._change_triggers();
    END IF;
END $$;

ALTER TABLE memory.changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.changes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.changes
    USING (user_id = memory.current_tenant())
    WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT ON memory.changes TO PUBLIC;

CREATE FUNCTION "memory_changes"(
	"since" TEXT DEFAULT NULL, /* Option < & str > */
	"limit" INT DEFAULT 100 /* Option < i32 > */
) RETURNS jsonb /* JsonB */
STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_changes_wrapper';


-- ---------------------------------------------------------------------------------------------
-- Spaces and grants (sql/spaces.sql, sql/security.sql, src/pg/spaces.rs).
-- ---------------------------------------------------------------------------------------------
-- Spaces and grants (docs/api.md "Spaces"): owners of memories other than one user, and who
-- may read or write them. A space's rows carry `space:<name>` in user_id, like a tenant's id
-- (crates/memory_core/src/spaces.rs says why); sql/security.sql's row policies admit a member
-- through memory.space_reads / memory.space_writes (src/pg/spaces.rs).

-- A space: its name (unique in the database, as a role's is) and a stable id.
CREATE TABLE memory.spaces (
    name       text        NOT NULL PRIMARY KEY,
    id         uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- Read and written through memory_space_create and memory_grants only (as the owner): the
-- names of other tenants' spaces are theirs.
REVOKE ALL ON memory.spaces FROM PUBLIC;

-- Who may use a space: user_id is the member (the grantee), so that memory_erase_tenant of a
-- member removes its grants with its rows (sql/erase.sql finds tables by that column) and the
-- tenant policy lets a member read its own grants. Written as the owner by memory_grant and
-- memory_revoke, which check that the caller is the space's admin (src/ops/spaces.rs).
CREATE TABLE memory.grants (
    space      text        NOT NULL REFERENCES memory.spaces (name) ON DELETE CASCADE,
    user_id    text        NOT NULL,
    access     text        NOT NULL CHECK (access IN ('read', 'write', 'admin')),
    agent_id   text,
    categories text[],
    granted_by text        NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, space)
);
CREATE INDEX grants_space_idx ON memory.grants (space);

-- History names who wrote into a space. In role mode the actor (the role) is the member
-- already; in setting mode the role is the application's, shared by all its users, so the
-- member (memory_ext.user_id) is added after it. A BEFORE trigger on history, so that every
-- trigger that writes history (items, blocks, files, messages, the store) names the member
-- without each knowing about spaces.
CREATE FUNCTION memory._history_writer() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    me text := CASE WHEN current_setting('memory_ext.tenant_source', true) = 'role' THEN NULL
                    ELSE memory.current_tenant() END;
BEGIN
    IF NEW.user_id LIKE 'space:%' AND me IS NOT NULL AND me IS DISTINCT FROM NEW.user_id THEN
        NEW.actor := coalesce(NEW.actor, '') || ' [member: ' || me || ']';
    END IF;
    RETURN NEW;
END $$;
-- Made by a function, as the change feed's triggers are (sql/changes.sql
-- `memory._change_triggers`): on a Citus cluster upgraded from 0.12.0 the coordinator runs the
-- upgrade before the workers have the function, so memory_citus_distribute() makes it there
-- afterwards (src/ops/citus.rs); on one node the upgrade calls it. Does nothing where it is.
CREATE FUNCTION memory._space_triggers() RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memory.history'::regclass AND tgname = 'history_writer') THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        -- As memory_citus_distribute sets it: triggers on distributed tables (docs/citus.md).
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    END IF;
    -- Only a space's rows: a tenant's own history rows do not call the function (~20 µs a
    -- write, docs/performance.md "A store put").
    EXECUTE $s$CREATE TRIGGER history_writer BEFORE INSERT ON memory.history
               FOR EACH ROW WHEN (NEW.user_id LIKE 'space:%')
               EXECUTE FUNCTION memory._history_writer()$s$;
    RETURN true;
END $fn$;
REVOKE ALL ON FUNCTION memory._space_triggers() FROM PUBLIC;
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._space_triggers();
    END IF;
END $$;

SELECT pg_catalog.pg_extension_config_dump('memory.spaces', '');
SELECT pg_catalog.pg_extension_config_dump('memory.grants', '');

CREATE FUNCTION memory."space_reads"(
	"owner" TEXT, /* Option < & str > */
	"memory" bool, /* Option < bool > */
	"category" TEXT /* Option < & str > */
) RETURNS bool /* bool */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'space_reads_wrapper';

CREATE FUNCTION memory."space_writes"(
	"owner" TEXT, /* Option < & str > */
	"memory" bool, /* Option < bool > */
	"category" TEXT /* Option < & str > */
) RETURNS bool /* bool */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'space_writes_wrapper';

-- Grants: a member reads its own (the tenant policy on user_id, the grantee); memory_grant and
-- memory_revoke write them as the owner after checking the caller is the space's admin.
ALTER TABLE memory.grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.grants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.grants
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT ON memory.grants TO PUBLIC;

CREATE FUNCTION "memory_space_create"(
	"name" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_space_create_wrapper';

CREATE FUNCTION "memory_grant"(
	"space" TEXT, /* Option < & str > */
	"grantee" TEXT, /* Option < & str > */
	"access" TEXT DEFAULT 'read', /* Option < & str > */
	"agent" TEXT DEFAULT NULL, /* Option < & str > */
	"categories" TEXT[] DEFAULT NULL /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_grant_wrapper';

CREATE FUNCTION "memory_revoke"(
	"space" TEXT, /* Option < & str > */
	"grantee" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_revoke_wrapper';

CREATE FUNCTION "memory_grants"() RETURNS jsonb /* JsonB */
STRICT STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_grants_wrapper';

-- Shared blocks (block_attach, src/ops/blocks.rs): a block attached to an agent other than its
-- own, the caller's (another of its agents) or a granted space's. The block stays one row with
-- one version line; each attached agent's compile_core_blocks reads it where it lives, and an
-- edit through any of them changes it there. user_id is the attaching agent's tenant; owner
-- the block's. No foreign keys, to the block or to the agent: on Citus the block may live on
-- another shard, and a Citus cluster upgraded from 0.12.0 makes this table while memory.agents
-- is already distributed (a local table cannot reference it). A block or an agent deleted
-- leaves an attachment that shows nothing; erasing the tenant removes it.
CREATE TABLE memory.block_attachments (
    user_id     text        NOT NULL,
    agent_id    text        NOT NULL,
    owner       text        NOT NULL,
    block_id    uuid        NOT NULL,
    read_only   boolean     NOT NULL DEFAULT false,
    attached_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, agent_id, block_id)
);
ALTER TABLE memory.block_attachments ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.block_attachments FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.block_attachments
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.block_attachments TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory.block_attachments', '');

CREATE FUNCTION "block_attach"(
	"agent_id" TEXT, /* Option < & str > */
	"block_id" uuid, /* Option < pgrx :: Uuid > */
	"read_only" bool DEFAULT false /* Option < bool > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'block_attach_wrapper';

CREATE FUNCTION "block_detach"(
	"agent_id" TEXT, /* Option < & str > */
	"block_id" uuid /* Option < pgrx :: Uuid > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'block_detach_wrapper';

-- Import: attached blocks (block_attachments) take the importing tenant as their owner.
-- One exported row for tenant p_user: its agent and thread ids remapped (p_agents, p_threads:
-- {"old": "new"}), its model cleared where the backfill must embed it.
CREATE OR REPLACE FUNCTION memory._import_row(r jsonb, p_section text, p_user text, p_agents jsonb, p_threads jsonb)
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

-- ---------------------------------------------------------------------------------------------
-- Webhooks (sql/webhooks.sql): their cursors and dead letters, written by the gateway.
-- ---------------------------------------------------------------------------------------------
-- Each webhook's place in its tenant's change feed: `hook` names the webhook (a hash of its
-- URL, src/webhook.rs of the gateway), `cursor` is memory_changes' cursor after the last change
-- delivered or given up on.
CREATE TABLE memory.webhook_cursors (
    user_id    text        NOT NULL,
    hook       text        NOT NULL,
    cursor     text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, hook)
);

-- The dead letters: a change whose every attempt failed, with the body that was not accepted
-- (ids only, as the feed: never text), how many attempts were made and the last error.
CREATE TABLE memory.webhook_dead (
    user_id     text        NOT NULL,
    id          uuid        NOT NULL DEFAULT gen_random_uuid(),
    hook        text        NOT NULL,
    delivery_id text        NOT NULL,
    body        jsonb       NOT NULL,
    attempts    integer     NOT NULL CHECK (attempts > 0),
    last_error  text        NOT NULL,
    failed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id)
);
CREATE INDEX webhook_dead_failed_idx ON memory.webhook_dead (user_id, failed_at);
ALTER TABLE memory.webhook_cursors ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.webhook_cursors FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.webhook_cursors
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('memory.webhook_cursors', '');
ALTER TABLE memory.webhook_dead ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.webhook_dead FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.webhook_dead
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('memory.webhook_dead', '');
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.webhook_cursors TO PUBLIC;
GRANT SELECT, INSERT, DELETE ON memory.webhook_dead TO PUBLIC;

-- Summaries the worker keeps (docs/api.md "Summaries"; sql/summaries.sql).
-- One row per summary: its definition, its current answer and what that answer rests on.
-- `evidence` the memories the answer used; `fingerprint` the memories it could have used
-- (sql/queries/summaries_evidence.sql) when it was written, so that the worker sees the scope
-- change; `stale` set when either changed and cleared by the next version.
CREATE TABLE memory.summaries (
    user_id      text        NOT NULL,
    name         text        NOT NULL CHECK (name <> '' AND length(name) <= 110),
    question     text        NOT NULL CHECK (question <> '' AND length(question) <= 500),
    scope        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(scope) = 'object'),
    builtin      boolean     NOT NULL DEFAULT false,
    -- A built-in summary the tenant dropped: the worker does not define it again.
    disabled     boolean     NOT NULL DEFAULT false,
    answer       text,
    evidence     uuid[]      NOT NULL DEFAULT '{}',
    fingerprint  text,
    method       text        CHECK (method IN ('llm', 'extractive')),
    version      integer     NOT NULL DEFAULT 0 CHECK (version >= 0),
    stale        boolean     NOT NULL DEFAULT true,
    stale_since  timestamptz DEFAULT now(),
    refreshed_at timestamptz,
    -- When the worker last compared the scope with the fingerprint.
    checked_at   timestamptz,
    attempts     integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at     timestamptz,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, name)
);
-- The worker's queue: stale summaries, by when they may be tried.
CREATE INDEX summaries_stale_idx ON memory.summaries (retry_at) WHERE stale AND NOT disabled;
-- Which summaries rest on a memory (a purge scrubs them, sql/triggers.sql memory._erase_copies).
CREATE INDEX summaries_evidence_idx ON memory.summaries USING gin (evidence);

-- Every version a summary had: its answer and evidence. A purge of a memory it rested on
-- clears the answer (`erased`): the version stays, what it said goes.
CREATE TABLE memory.summary_versions (
    user_id    text        NOT NULL,
    name       text        NOT NULL,
    version    integer     NOT NULL CHECK (version >= 1),
    question   text        NOT NULL,
    answer     text,
    evidence   uuid[]      NOT NULL DEFAULT '{}',
    method     text        NOT NULL CHECK (method IN ('llm', 'extractive')),
    tokens_in  integer     NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out integer     NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    erased     boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, name, version),
    FOREIGN KEY (user_id, name) REFERENCES memory.summaries ON DELETE CASCADE
);
CREATE INDEX summary_versions_evidence_idx ON memory.summary_versions USING gin (evidence);

-- Per tenant and day: the model's tokens spent on summaries (memory_ext.summary_daily_tokens
-- bounds them). Written by the worker as the extension's owner.
CREATE TABLE memory.summary_usage (
    user_id    text    NOT NULL,
    day        date    NOT NULL,
    calls      integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    tokens_in  bigint  NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out bigint  NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    PRIMARY KEY (user_id, day)
);
ALTER TABLE memory.summaries ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.summaries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.summaries
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
ALTER TABLE memory.summary_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.summary_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.summary_versions
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
ALTER TABLE memory.summary_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.summary_usage FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.summary_usage
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
GRANT SELECT ON memory.summaries, memory.summary_versions, memory.summary_usage TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory.summaries', '');
SELECT pg_catalog.pg_extension_config_dump('memory.summary_versions', '');
SELECT pg_catalog.pg_extension_config_dump('memory.summary_usage', '');

CREATE  FUNCTION "memory_summary_define"(
	"name" TEXT, /* Option < & str > */
	"question" TEXT, /* Option < & str > */
	"scope" jsonb DEFAULT '{}' /* Option < JsonB > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_summary_define_wrapper';

CREATE  FUNCTION "memory_summaries"() RETURNS jsonb /* JsonText */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_summaries_wrapper';

CREATE  FUNCTION "memory_summary_get"(
	"name" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS jsonb /* JsonText */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_summary_get_wrapper';

CREATE  FUNCTION "memory_summary_drop"(
	"name" TEXT /* Option < & str > */
) RETURNS bool /* bool */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_summary_drop_wrapper';

CREATE  FUNCTION "memory_summary_refresh"(
	"name" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_summary_refresh_wrapper';

-- memory_context takes the summaries to include.
DROP FUNCTION memory_context(text, text, text, integer, integer, integer);
CREATE  FUNCTION "memory_context"(
	"agent_id" TEXT, /* Option < & str > */
	"thread_id" TEXT, /* Option < & str > */
	"query" TEXT, /* Option < & str > */
	"budget_tokens" INT DEFAULT 2048, /* Option < i32 > */
	"memories" INT DEFAULT 3, /* Option < i32 > */
	"files" INT DEFAULT 3, /* Option < i32 > */
	"summaries" TEXT[] DEFAULT NULL /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_context_wrapper';

-- A purge scrubs the summaries that rested on the memory (sql/triggers.sql). CREATE OR REPLACE
-- drops the Citus plan setting (sql/citus.sql), so it is set again there.
CREATE OR REPLACE FUNCTION memory._erase_copies(p_user text, p_entity text, p_id text) RETURNS void
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
        -- A summary's answer that rested on the memory may repeat it (sql/summaries.sql): the
        -- current answer goes (the worker writes the next from what is left), and so does every
        -- past version's; that the versions were written stays.
        -- (Two statements: Citus refuses now() inside COALESCE or CASE.)
        UPDATE memory.summaries SET stale_since = now()
         WHERE user_id = p_user AND evidence @> ARRAY[p_id::uuid] AND stale_since IS NULL;
        UPDATE memory.summaries
           SET answer = NULL, evidence = array_remove(evidence, p_id::uuid), stale = true, retry_at = NULL
         WHERE user_id = p_user AND evidence @> ARRAY[p_id::uuid];
        UPDATE memory.summary_versions SET answer = NULL, erased = true
         WHERE user_id = p_user AND evidence @> ARRAY[p_id::uuid];
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._erase_copies(text, text, text) FROM PUBLIC;
-- Access waiting to be counted (0.13.0; docs/operations.md "Access bookkeeping"): where the
-- background worker serves the database, a retrieval queues the ids of the memories it
-- returned here (sql/queries/access_queue.sql), one row per read, and the worker writes them
-- to memory.items (last_accessed_at, access_count: sql/queries/access_fold.sql) at each look
-- for work. Writing them at read time made new versions of the rows read, and of their index
-- entries when a page was full (~1 ms of a read at 100k memories, the dearest statement of a
-- read). Ids and times only, never text; a tenant's erasure takes its rows with the rest.
CREATE TABLE memory.access_queue (
    user_id text        NOT NULL,
    ids     uuid[]      NOT NULL,
    read_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX access_queue_user_idx ON memory.access_queue (user_id);
ALTER TABLE memory.access_queue ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory.access_queue FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory.access_queue
    USING (user_id = memory.current_tenant()) WITH CHECK (user_id = memory.current_tenant());
SELECT pg_catalog.pg_extension_config_dump('memory.access_queue', '');
GRANT SELECT, INSERT ON memory.access_queue TO PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._citus_trigger_plans();
    END IF;
END $$;

-- The space policies on every tenant table, now that every table of this release exists.
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

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._space_policies();
    END IF;
END $$;

-- A message into a space's conversation, from a member holding write on the space
-- (docs/api.md "Spaces"): the early check of sql/triggers.sql admits it as the policy does.
CREATE OR REPLACE FUNCTION memory._messages_admit() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF row_security_active('memory.messages') AND NEW.user_id IS DISTINCT FROM memory.current_tenant()
       AND NOT memory.space_writes(NEW.user_id, false, NULL) THEN
        RAISE EXCEPTION 'new row violates row-level security policy for table "messages"'
            USING ERRCODE = '42501', HINT = 'a session writes only its own tenant''s messages and those of the spaces it holds write on';
    END IF;
    RETURN NEW;
END $$;

-- The worker's refine job (docs/api.md "Extraction and ended runs"): what compact_thread and
-- memory_capture write without the model, the model's version in the background; and its
-- summaries job (docs/api.md "Summaries").
ALTER TABLE memory.worker_jobs DROP CONSTRAINT worker_jobs_job_check;
ALTER TABLE memory.worker_jobs
    ADD CONSTRAINT worker_jobs_job_check CHECK (job IN ('ttl_sweep', 'purge', 'consolidate', 'backfill', 'extract', 'episodes', 'refine', 'summaries'));
CREATE OR REPLACE FUNCTION memory._worker_job_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ARRAY['backfill', 'consolidate', 'episodes', 'extract', 'purge', 'refine', 'summaries', 'ttl_sweep'] $$;
-- One statement per EXECUTE: on Citus these tables are distributed, and Citus sends an index's
-- command to the shards as the statement's text, which here would be the whole script. IF NOT
-- EXISTS: on Citus the script runs on every node, and a worker may have the index already from
-- the coordinator's command (or the coordinator's command find the worker's).
DO $$
BEGIN
    EXECUTE $s$CREATE INDEX IF NOT EXISTS messages_refine_idx ON memory.messages (created_at) WHERE metadata -> 'summary' ->> 'pending' = 'llm'$s$;
    EXECUTE $s$CREATE INDEX IF NOT EXISTS details_refine_idx ON memory.details (created_at) WHERE metadata ->> 'pending' = 'llm'$s$;
    EXECUTE $s$CREATE INDEX IF NOT EXISTS files_refine_idx ON memory.files (updated_at) WHERE metadata ->> 'pending' = 'llm'$s$;
END $$;

-- One round trip on Citus (docs/citus.md): forms of the five calls an agent makes most that take
-- their tenant as an argument, which memory_citus_distribute makes distributed functions by it
-- (src/pg/citus.rs `routed`).
CREATE  FUNCTION "memory_query_for"(
	"user_id" TEXT, /* & str */
	"request" jsonb /* Json */
) RETURNS jsonb /* JsonB */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_query_for_wrapper';
CREATE  FUNCTION "memory_write_for"(
	"user_id" TEXT, /* & str */
	"request" jsonb /* Json */
) RETURNS jsonb /* JsonB */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_write_for_wrapper';
CREATE  FUNCTION "message_append_for"(
	"user_id" TEXT, /* & str */
	"thread_id" TEXT, /* & str */
	"role" TEXT, /* & str */
	"content" TEXT, /* & str */
	"options" jsonb DEFAULT '{}' /* Json */
) RETURNS jsonb /* JsonB */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'message_append_for_wrapper';
CREATE  FUNCTION "compile_core_blocks_for"(
	"user_id" TEXT, /* & str */
	"agent_id" TEXT, /* & str */
	"now" timestamp with time zone DEFAULT now() /* TimestampWithTimeZone */
) RETURNS TEXT /* String */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'compile_core_blocks_for_wrapper';
CREATE  FUNCTION "memory_context_for"(
	"user_id" TEXT, /* & str */
	"agent_id" TEXT, /* & str */
	"thread_id" TEXT, /* & str */
	"query" TEXT, /* & str */
	"budget_tokens" INT DEFAULT 2048, /* i32 */
	"memories" INT DEFAULT 3, /* i32 */
	"files" INT DEFAULT 3, /* i32 */
	"summaries" TEXT[] DEFAULT ARRAY[]::text[] /* Vec < Option < String > > */
) RETURNS TEXT /* String */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_context_for_wrapper';

-- The helpers every history row calls, inlined where they are called: schema-qualified names
-- and operators instead of a `SET search_path` (sql/triggers.sql says why).
CREATE OR REPLACE FUNCTION memory._restoring() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.current_setting('row_security') OPERATOR(pg_catalog.=) 'off'
       AND pg_catalog.current_setting('check_function_bodies') OPERATOR(pg_catalog.=) 'off'
$$;
ALTER FUNCTION memory._restoring() RESET search_path;
CREATE OR REPLACE FUNCTION memory._invoker() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN pg_catalog.current_setting('role') OPERATOR(pg_catalog.<>) 'none'
                THEN pg_catalog.current_setting('role') ELSE CAST(SESSION_USER AS pg_catalog.text) END
$$;
ALTER FUNCTION memory._invoker() RESET search_path;
CREATE OR REPLACE FUNCTION memory._actor() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT memory._invoker()
           OPERATOR(pg_catalog.||) COALESCE(' (' OPERATOR(pg_catalog.||) NULLIF(pg_catalog.btrim(pg_catalog.left(
               pg_catalog.regexp_replace(pg_catalog.current_setting('memory_ext.on_behalf_of', true),
                                         '[[:cntrl:]]+', ' ', 'g'), 100)), '') OPERATOR(pg_catalog.||) ')', '')
$$;
ALTER FUNCTION memory._actor() RESET search_path;

-- Half precision (docs/performance.md "Half precision"): memory_ext.embedding_precision = half
-- gives a model first stored afterwards halfvec HNSW indexes (new helpers below);
-- memory_embedding_reindex() lists the statements that move the models registered before.
-- The name of a model's HNSW index on `tbl` (items, messages, files): `<tbl>_emb_<md5 of the
-- model>`, `_emh_` for a half-precision index of a model that could have a full one, so that
-- memory_embedding_reindex() builds the new index beside the old before dropping it.
CREATE FUNCTION memory._model_index_name(tbl text, model text, dims integer, typ text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tbl || CASE WHEN typ = 'halfvec' AND dims <= 2000 THEN '_emh_' ELSE '_emb_' END || left(md5(model), 12)
$$;

-- What follows `USING hnsw` for a model's index: the cast to its sized type, the cosine operator
-- class, the model's rows only.
CREATE FUNCTION memory._model_index_def(vschema text, model text, dims integer, typ text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT format('((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                  vschema, typ, dims, vschema, typ || '_cosine_ops', model)
$$;

-- The index type a model of `dims` dimensions gets at `precision` ('full' or 'half'): NULL
-- beyond pgvector's HNSW limits (2,000 dimensions for vector, 4,000 for halfvec).
CREATE FUNCTION memory._model_index_type(dims integer, prec text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN dims <= 2000 AND prec = 'full' THEN 'vector' WHEN dims <= 4000 THEN 'halfvec' END
$$;

CREATE OR REPLACE FUNCTION memory._create_model_indexes(p_model text, p_dims integer, p_type text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET client_min_messages = warning AS $$
DECLARE
    vschema text;
    here    boolean := true;
    citus   boolean := EXISTS (SELECT FROM pg_extension WHERE extname = 'citus');
    pool    text;
BEGIN
    IF citus THEN
        EXECUTE 'SELECT citus_is_coordinator()' INTO here;
    END IF;
    IF p_type IS NULL OR NOT here THEN
        RETURN;
    END IF;
    IF citus THEN
        -- One shard's index at a time per worker. Otherwise the coordinator opens more
        -- connections to a worker while its shard builds run long (up to this setting, 16 by
        -- default), each a parallel HNSW build holding the worker's maintenance_work_mem in
        -- shared memory: on a cluster of 168,000 memories two builds ran at once on a worker,
        -- and registering the model on one of 1M (maintenance_work_mem 1GB on the workers) took
        -- this machine's shared memory from 7.6 to 21.8 GB within a minute, until the kernel's
        -- OOM killer stopped it. Limited, that build took as long (31.6 s against 32.9 s).
        pool := current_setting('citus.max_adaptive_executor_pool_size');
        PERFORM set_config('citus.max_adaptive_executor_pool_size', '1', true);
    END IF;
    SELECT n.nspname INTO vschema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'vector';
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.items USING hnsw %s',
                   memory._model_index_name('items', p_model, p_dims, p_type), memory._model_index_def(vschema, p_model, p_dims, p_type));
    PERFORM memory._name_partition_indexes('memory.' || memory._model_index_name('items', p_model, p_dims, p_type));
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.messages USING hnsw %s',
                   memory._model_index_name('messages', p_model, p_dims, p_type), memory._model_index_def(vschema, p_model, p_dims, p_type));
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.files USING hnsw %s',
                   memory._model_index_name('files', p_model, p_dims, p_type), memory._model_index_def(vschema, p_model, p_dims, p_type));
    IF citus THEN
        PERFORM set_config('citus.max_adaptive_executor_pool_size', pool, true);
    END IF;
END $$;

CREATE OR REPLACE FUNCTION memory._ensure_embedding_model(p_model text, p_dims integer) RETURNS boolean
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
    typ := memory._model_index_type(p_dims, coalesce(current_setting('memory_ext.embedding_precision', true), 'full'));
    INSERT INTO memory.embedding_models (model_id, dims, index_type) VALUES (p_model, p_dims, typ);
    -- On Citus the registry's trigger fires where its placements are, which need not include
    -- this node (the coordinator): its indexes are made here.
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._create_model_indexes(p_model, p_dims, typ);
    END IF;
    RETURN true;
END $$;

-- memory_embedding_reindex(to_precision) -> (step, statement): the statements that move every
-- registered model's HNSW indexes to `to_precision` ('full' or 'half'; by default
-- memory_ext.embedding_precision), for psql's \gexec (docs/operations.md "Half precision"):
--
--   SELECT statement FROM memory_embedding_reindex('half') ORDER BY step \gexec
--
-- Statements, not actions, because CREATE INDEX CONCURRENTLY cannot run inside a function, and
-- it is what lets writes go on while an index builds: memory.items is partitioned, so its new
-- index is made ON ONLY the parent, built concurrently on each partition and attached; the
-- other tables' are built concurrently. Then memory._embedding_index_switch records the new
-- type (searches cast to it from their next statement, src/pg/vector.rs) and the old indexes
-- are dropped (memory.items' with a plain DROP INDEX: a partitioned index has no concurrent
-- drop; it waits for running statements on the table and holds them off for the drop alone).
-- Every statement may be run again after an interruption. An empty answer: nothing to move.
-- Not on Citus (0A000): there a model's indexes are made on the coordinator's tables at its
-- first write (docs/citus.md).
CREATE FUNCTION memory_embedding_reindex(to_precision text DEFAULT NULL)
RETURNS TABLE (step integer, statement text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    prec    text := coalesce(to_precision, current_setting('memory_ext.embedding_precision', true), 'full');
    vschema text;
    m       memory.embedding_models;
    want    text;
    def     text;
    parent  text;
    p       record;
    n       integer := 0;
BEGIN
    IF prec NOT IN ('full', 'half') THEN
        RAISE EXCEPTION 'invalid precision "%"', prec USING ERRCODE = '22023', HINT = 'full or half';
    END IF;
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'memory_embedding_reindex does not run on Citus' USING ERRCODE = '0A000',
            HINT = 'set memory_ext.embedding_precision before the first vector of a model is stored';
    END IF;
    SELECT quote_ident(ns.nspname) INTO vschema FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
    WHERE e.extname = 'vector';
    FOR m IN SELECT * FROM memory.embedding_models ORDER BY model_id LOOP
        want := memory._model_index_type(m.dims, prec);
        CONTINUE WHEN want IS NOT DISTINCT FROM m.index_type;
        IF want IS NOT NULL THEN
            def := memory._model_index_def(vschema, m.model_id, m.dims, want);
            parent := memory._model_index_name('items', m.model_id, m.dims, want);
            n := n + 1; step := n;
            statement := format('CREATE INDEX IF NOT EXISTS %I ON ONLY memory.items USING hnsw %s', parent, def);
            RETURN NEXT;
            FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                     WHERE i.inhparent = 'memory.items'::regclass ORDER BY c.relname LOOP
                n := n + 1; step := n;
                statement := format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON memory.%I USING hnsw %s',
                                    parent || '_' || substring(p.relname FROM '_(p[0-9]+)$'), p.relname, def);
                RETURN NEXT;
                n := n + 1; step := n;
                statement := format('ALTER INDEX memory.%I ATTACH PARTITION memory.%I',
                                    parent, parent || '_' || substring(p.relname FROM '_(p[0-9]+)$'));
                RETURN NEXT;
            END LOOP;
            n := n + 1; step := n;
            statement := format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON memory.messages USING hnsw %s',
                                memory._model_index_name('messages', m.model_id, m.dims, want), def);
            RETURN NEXT;
            n := n + 1; step := n;
            statement := format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON memory.files USING hnsw %s',
                                memory._model_index_name('files', m.model_id, m.dims, want), def);
            RETURN NEXT;
        END IF;
        n := n + 1; step := n;
        statement := format('SELECT memory._embedding_index_switch(%L, %L)', m.model_id, want);
        RETURN NEXT;
        IF m.index_type IS NOT NULL THEN
            n := n + 1; step := n;
            statement := format('DROP INDEX IF EXISTS memory.%I', memory._model_index_name('items', m.model_id, m.dims, m.index_type));
            RETURN NEXT;
            n := n + 1; step := n;
            statement := format('DROP INDEX CONCURRENTLY IF EXISTS memory.%I', memory._model_index_name('messages', m.model_id, m.dims, m.index_type));
            RETURN NEXT;
            n := n + 1; step := n;
            statement := format('DROP INDEX CONCURRENTLY IF EXISTS memory.%I', memory._model_index_name('files', m.model_id, m.dims, m.index_type));
            RETURN NEXT;
        END IF;
    END LOOP;
END $$;

-- The operator's, as the indexes are: an application role has no use for it.
REVOKE ALL ON FUNCTION memory_embedding_reindex(text) FROM PUBLIC;

-- Records a model's new index type once its indexes are built and valid (a concurrent build
-- that failed leaves an invalid index behind: 55000, and the searches keep the old one). Run by
-- memory_embedding_reindex()'s statements, as the tables' owner.
CREATE FUNCTION memory._embedding_index_switch(p_model text, p_type text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    m   memory.embedding_models;
    tbl text;
    idx text;
BEGIN
    SELECT * INTO m FROM memory.embedding_models WHERE model_id = p_model FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no embedding model "%"', p_model USING ERRCODE = '22023';
    END IF;
    IF p_type IS NOT NULL THEN
        FOREACH tbl IN ARRAY ARRAY['items', 'messages', 'files'] LOOP
            idx := memory._model_index_name(tbl, p_model, m.dims, p_type);
            IF NOT EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                           JOIN pg_namespace ns ON ns.oid = c.relnamespace
                           WHERE ns.nspname = 'memory' AND c.relname = idx AND i.indisvalid) THEN
                RAISE EXCEPTION 'index memory.% is missing or not valid', idx USING ERRCODE = '55000',
                    HINT = 'drop it if it exists and run memory_embedding_reindex()''s statements again';
            END IF;
        END LOOP;
    END IF;
    UPDATE memory.embedding_models SET index_type = p_type WHERE model_id = p_model;
END $$;
REVOKE ALL ON FUNCTION memory._embedding_index_switch(text, text) FROM PUBLIC;

-- Two helpers every write called as SQL functions, parsed and planned at each call, now inlined
-- where they are used (sql/search.sql, sql/triggers.sql).
-- One row per (document, lexeme) of the given documents, without the tenant lexeme.
-- A body parsed at creation (BEGIN ATOMIC: its names resolved then, whatever the caller's
-- search_path) and no SET clause, so that the planner inlines it into the statements of
-- memory._apply_term_stats, whose plans PL/pgSQL keeps: called as a function, every write
-- parsed and planned it twice (0.3 ms of a memory_write, perf at 5,000 memories).
CREATE OR REPLACE FUNCTION memory._terms(p_users text[], p_threads text[], p_tsvs tsvector[])
RETURNS TABLE (user_id text, thread_id text, lexeme text, tf integer)
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT r.user_id, r.thread_id, u.lexeme, coalesce(array_length(u.positions, 1), 1)
    FROM unnest(p_users, p_threads, p_tsvs) AS r(user_id, thread_id, tsv)
    CROSS JOIN LATERAL unnest(r.tsv) u
    WHERE u.lexeme <> memory.tenant_lexeme(r.user_id);
END;

-- What a change-log bullet needs to render later ("+created: [Personal] ... (imp=2)"), as it
-- was at the time of the change. A body parsed at creation and no SET clause, so that it is
-- inlined into the audit trigger's kept expression rather than parsed and planned per row.
CREATE OR REPLACE FUNCTION memory._item_meta(i memory.items) RETURNS jsonb
LANGUAGE sql STABLE
RETURN jsonb_build_object('kind', i.kind, 'category', i.category, 'text', left(i.text, 280),
                          'importance', i.importance);
