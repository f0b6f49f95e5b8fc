-- memory_ext 0.11.0 -> 0.12.0 (ALTER EXTENSION memory_ext UPDATE TO '0.12.0')
--
-- The store (docs/api.md "Store"): LangGraph's BaseStore in SQL. New tables memory.store_items
-- and memory.store_vectors (row-level security, in pg_dump's output; on Citus
-- `SELECT memory_citus_distribute()` distributes them, docs/citus.md), their audit trigger
-- (history entity 'store'), and the functions store_put, store_get, store_delete,
-- store_search, store_list_namespaces and store_batch. memory_purge deletes expired items.
--
-- LangGraph's checkpointer (docs/api.md "Checkpoints"): new tables memory.checkpoint_steps,
-- memory.checkpoint_blobs and memory.checkpoint_writes (row-level security, in pg_dump's output,
-- distributed by memory_citus_distribute()), the type memory.checkpoint_tuple, and the
-- functions checkpoint_put, checkpoint_put_writes, checkpoint_list, checkpoint_get,
-- checkpoint_delete_thread, checkpoint_delete_runs, checkpoint_copy_thread and checkpoint_prune.
--
-- Statistics (docs/api.md "Statistics"): memory_overview(user_id, days), one tenant's memory at
-- a glance (the inspector's overview), and memory.stats(), every tenant's, for monitoring
-- (owner-only); memory._worker_summary(). History's actor and a consent decision's decided_by
-- add whom the role acts for (memory_ext.on_behalf_of). A new index, memory.items_superseded_by_idx,
-- finds what a memory replaced (the inspector's supersede chain). memory.events gains `actor`.

-- History names store items. A statement of its own for each change, guarded: on Citus the
-- coordinator sends the ALTER on to every node, where the script runs as well.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'memory.history'::regclass
                                               AND conname = 'history_entity_check'
                                               AND pg_get_constraintdef(oid) LIKE '%store%') THEN
        ALTER TABLE memory.history DROP CONSTRAINT IF EXISTS history_entity_check;
        ALTER TABLE memory.history ADD CONSTRAINT history_entity_check
            CHECK (entity IN ('item', 'block', 'file', 'message', 'store'));
    END IF;
END $$;

-- The backfill embeds store texts too: their failures are recorded as the others' (target
-- 'store'). Guarded, as the history check above.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'memory.embedding_failures'::regclass
                                               AND conname = 'embedding_failures_target_check'
                                               AND pg_get_constraintdef(oid) LIKE '%store%') THEN
        ALTER TABLE memory.embedding_failures DROP CONSTRAINT IF EXISTS embedding_failures_target_check;
        ALTER TABLE memory.embedding_failures ADD CONSTRAINT embedding_failures_target_check
            CHECK (target IN ('item', 'message', 'file', 'store'));
    END IF;
END $$;

-------------------------------------------------------------------------------- store
-- As sql/store.sql.
-- A namespace as one text key, label by label (each label escaped, then ended by U+0001), so
-- that the namespaces under a prefix are exactly the keys that start with the prefix's key,
-- whatever the labels hold: store_search finds them through store_items_ns_idx with
-- LIKE '<key>%' (memory._store_ns_like) instead of walking the tenant's items.
CREATE FUNCTION memory._store_ns_key(ns text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT coalesce(string_agg(replace(replace(l, E'\x02', E'\x02\x02'), E'\x01', E'\x02\x01') || E'\x01', ''
                               ORDER BY i), '')
    FROM unnest(ns) WITH ORDINALITY AS u(l, i)
$$;

-- The LIKE pattern of the namespaces under `prefix`: its key with LIKE's own characters escaped.
CREATE FUNCTION memory._store_ns_like(prefix text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT replace(replace(replace(memory._store_ns_key(prefix), '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

CREATE TABLE memory.store_items (
    user_id    text        NOT NULL,
    namespace  text[]      NOT NULL CHECK (cardinality(namespace) BETWEEN 1 AND 32
                                           AND array_position(namespace, NULL) IS NULL),
    key        text        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    value      jsonb       NOT NULL CHECK (jsonb_typeof(value) = 'object'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    ttl        interval    CHECK (ttl > interval '0'),
    expires_at timestamptz,
    ns_key     text        GENERATED ALWAYS AS (memory._store_ns_key(namespace)) STORED,
    PRIMARY KEY (user_id, namespace, key),
    CONSTRAINT store_items_expiry CHECK ((ttl IS NULL) = (expires_at IS NULL))
);
-- A search without a query is the newest items, ties broken by namespace and key: walked here
-- in that order, it stops at the page (store_search.sql).
CREATE INDEX store_items_updated_idx ON memory.store_items (user_id, updated_at DESC, namespace, key);
CREATE INDEX store_items_ns_idx ON memory.store_items (user_id, ns_key text_pattern_ops);
CREATE INDEX store_items_expires_idx ON memory.store_items (expires_at) WHERE expires_at IS NOT NULL;

-- One row per indexed text of an item: `field` is the path it came from (`$`, `title`,
-- `tags[*]#1`). `embedding_model` is the model the vector is of: the active model's id, or
-- 'client' for a vector the caller computed (the Python and TypeScript stores' own `embed`);
-- a search compares only vectors of its query's model and size. No vector yet (the provider
-- was down, or an import): the backfill embeds `text` with the active model (src/embed/reembed.rs;
-- `id` names the row in memory.embedding_failures). A caller's vector is never replaced.
CREATE TABLE memory.store_vectors (
    user_id         text   NOT NULL,
    namespace       text[] NOT NULL,
    key             text   NOT NULL,
    field           text   NOT NULL,
    id              uuid   NOT NULL DEFAULT gen_random_uuid(),
    text            text   NOT NULL,
    embedding       vector,
    embedding_model text,
    PRIMARY KEY (user_id, namespace, key, field),
    FOREIGN KEY (user_id, namespace, key) REFERENCES memory.store_items ON DELETE CASCADE
);
CREATE INDEX store_vectors_unembedded_idx ON memory.store_vectors (user_id) WHERE embedding IS NULL;
CREATE UNIQUE INDEX store_vectors_id_idx ON memory.store_vectors (user_id, id);

-- Whether `v` satisfies every condition of `conds` (memory_core::store::filter: a list of
-- {path, op, value}). Equality is jsonb equality; the order operators compare numbers as numbers
-- and strings as strings, and are false across types (LangGraph's stores raise or say false).
CREATE FUNCTION memory._store_match(v jsonb, conds jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT coalesce(bool_and(
        CASE c ->> 'op'
            WHEN 'eq' THEN v #> p = c -> 'value'
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

-- Whether a namespace matches a prefix and a suffix, label by label ('*' is any one label).
CREATE FUNCTION memory._store_ns_match(ns text[], prefix text[], suffix text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT cardinality(ns) >= cardinality(prefix) AND cardinality(ns) >= cardinality(suffix)
       AND NOT EXISTS (SELECT 1 FROM generate_subscripts(prefix, 1) i
                        WHERE prefix[i] <> '*' AND prefix[i] <> ns[i])
       AND NOT EXISTS (SELECT 1 FROM generate_subscripts(suffix, 1) i
                        WHERE suffix[i] <> '*'
                          AND suffix[i] <> ns[cardinality(ns) - cardinality(suffix) + i])
$$;

-- Every change to a store item is a history event (entity 'store'): which item (its id), the
-- event, who, when, and the first 280 characters of the document before and after, as for
-- memories and files. A deleted item's events lose what it said and its namespace and key.
CREATE FUNCTION memory._store_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s memory.store_items := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        UPDATE memory.history
           SET old_ref = NULL, new_ref = NULL,
               meta = (meta - 'namespace' - 'key') || '{"erased": true}'
         WHERE user_id = OLD.user_id AND entity = 'store' AND memory_id = OLD.id::text;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (s.user_id, 'store', s.id::text,
            CASE WHEN TG_OP = 'INSERT' THEN 'ADD' WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP = 'UPDATE' THEN left(OLD.value::text, 280) END,
            CASE WHEN TG_OP <> 'DELETE' THEN left(NEW.value::text, 280) END,
            memory._actor(),
            CASE WHEN TG_OP = 'DELETE' THEN '{"erased": true}'::jsonb
                 ELSE jsonb_build_object('namespace', to_jsonb(s.namespace), 'key', s.key) END
              || memory._hint_meta());
    RETURN NULL;
END $$;
CREATE TRIGGER store_audit_insert AFTER INSERT ON memory.store_items FOR EACH ROW
EXECUTE FUNCTION memory._store_audit();
CREATE TRIGGER store_audit_update AFTER UPDATE ON memory.store_items FOR EACH ROW
WHEN (OLD.value IS DISTINCT FROM NEW.value)
EXECUTE FUNCTION memory._store_audit();
CREATE TRIGGER store_audit_delete AFTER DELETE ON memory.store_items FOR EACH ROW
EXECUTE FUNCTION memory._store_audit();
SELECT pg_catalog.pg_extension_config_dump('memory.store_items', '');
SELECT pg_catalog.pg_extension_config_dump('memory.store_vectors', '');
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['store_items', 'store_vectors'] LOOP
        EXECUTE format('ALTER TABLE memory.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON memory.%I
                            USING (user_id = memory.current_tenant())
                            WITH CHECK (user_id = memory.current_tenant())', t);
    END LOOP;
END $$;
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.store_items, memory.store_vectors TO PUBLIC;

-------------------------------------------------------------------------------- store functions (src/api/store.rs)
CREATE  FUNCTION "store_batch"(
	"ops" jsonb, /* Option < Json > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'store_batch_wrapper';

CREATE  FUNCTION "store_delete"(
	"namespace" TEXT[], /* :: std :: option :: Option < Vec < Option < String > > > */
	"key" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS bool /* bool */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'store_delete_wrapper';

CREATE  FUNCTION "store_get"(
	"namespace" TEXT[], /* :: std :: option :: Option < Vec < Option < String > > > */
	"key" TEXT, /* Option < & str > */
	"refresh_ttl" bool DEFAULT true, /* Option < bool > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* Option < JsonB > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'store_get_wrapper';

CREATE  FUNCTION "store_list_namespaces"(
	"prefix" TEXT[] DEFAULT '{}', /* :: std :: option :: Option < Vec < Option < String > > > */
	"suffix" TEXT[] DEFAULT '{}', /* :: std :: option :: Option < Vec < Option < String > > > */
	"max_depth" INT DEFAULT NULL, /* Option < i32 > */
	"limit" INT DEFAULT 100, /* Option < i32 > */
	"offset" INT DEFAULT 0, /* Option < i32 > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS SETOF TEXT[] /* Vec < Option < String > > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'store_list_namespaces_wrapper';

CREATE  FUNCTION "store_put"(
	"namespace" TEXT[], /* :: std :: option :: Option < Vec < Option < String > > > */
	"key" TEXT, /* Option < & str > */
	"value" jsonb, /* Option < Json > */
	"index" jsonb DEFAULT NULL, /* Option < Json > */
	"ttl" interval DEFAULT NULL, /* Option < Interval > */
	"embeddings" jsonb DEFAULT NULL, /* Option < Json > */
	"idempotency_key" TEXT DEFAULT NULL, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'store_put_wrapper';

CREATE  FUNCTION "store_search"(
	"namespace_prefix" TEXT[] DEFAULT '{}', /* :: std :: option :: Option < Vec < Option < String > > > */
	"query" TEXT DEFAULT NULL, /* Option < & str > */
	"filter" jsonb DEFAULT NULL, /* Option < Json > */
	"limit" INT DEFAULT 10, /* Option < i32 > */
	"offset" INT DEFAULT 0, /* Option < i32 > */
	"refresh_ttl" bool DEFAULT true, /* Option < bool > */
	"query_embedding" real[] DEFAULT NULL, /* :: std :: option :: Option < Vec < Option < f32 > > > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TABLE (
	"namespace" TEXT[],  /* Vec < Option < String > > */
	"key" TEXT,  /* String */
	"value" jsonb,  /* JsonB */
	"created_at" timestamp with time zone,  /* pgrx :: datum :: TimestampWithTimeZone */
	"updated_at" timestamp with time zone,  /* pgrx :: datum :: TimestampWithTimeZone */
	"score" double precision  /* Option < f64 > */
)
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'store_search_wrapper';

-------------------------------------------------------------------------------- citus
-- As sql/citus.sql: on a Citus node the store's audit trigger plans its statements per call too.
CREATE OR REPLACE FUNCTION memory._citus_trigger_plans() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['_items_term_stats()', '_items_audit()', '_relations_audit()', '_blocks_audit()',
                             '_messages_before_insert()', '_messages_audit()', '_files_audit()', '_threads_guard()',
                             '_erase_copies(text, text, text)', '_store_audit()']
    LOOP
        EXECUTE format('ALTER FUNCTION memory.%s SET plan_cache_mode = force_custom_plan', f);
    END LOOP;
END $$;
REVOKE ALL ON FUNCTION memory._citus_trigger_plans() FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._citus_trigger_plans();
    END IF;
END $$;

-------------------------------------------------------------------------------- import
-- As sql/import.sql: memory_import on Citus (0.11.0's applied the BM25 statistics from inside a
-- query of the tenant's shard, which Citus refuses).
CREATE OR REPLACE FUNCTION memory._import(p_user text, p_doc jsonb, p_agents jsonb, p_threads jsonb) RETURNS jsonb
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

-------------------------------------------------------------------------------- graph checkpoints
-- LangGraph's checkpointer (0.12.0, docs/api.md "Checkpoints"): a history of checkpoints per
-- tenant, thread and namespace, each with its parent, metadata and the pending writes of the
-- tasks that ran from it. Laid out as LangGraph's own PostgresSaver lays it out, so that the
-- Python and TypeScript savers (clients/) pass the same tests: the checkpoint document in
-- memory.checkpoint_steps, the channel values that are not plain JSON scalars in
-- memory.checkpoint_blobs by channel and version (a value unchanged from one step to the next
-- is stored once), the writes in memory.checkpoint_writes. Blobs are what the framework's
-- serializer made of a value (`type` names its format): the extension keeps them as bytes and
-- never reads them. Every function is SQL, for the same reason as checkpoint_save's.
CREATE TABLE memory.checkpoint_steps (
    user_id              text        NOT NULL,
    thread_id            text        NOT NULL,
    checkpoint_ns        text        NOT NULL DEFAULT '',
    checkpoint_id        text        NOT NULL,
    parent_checkpoint_id text,
    checkpoint           jsonb       NOT NULL CHECK (jsonb_typeof(checkpoint) = 'object'),
    metadata             jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    created_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, thread_id, checkpoint_ns, checkpoint_id)
);
-- checkpoint_delete_runs finds a run's checkpoints by the run_id LangGraph puts in metadata.
CREATE INDEX checkpoint_steps_run_idx ON memory.checkpoint_steps (user_id, (metadata ->> 'run_id'));

CREATE TABLE memory.checkpoint_blobs (
    user_id       text  NOT NULL,
    thread_id     text  NOT NULL,
    checkpoint_ns text  NOT NULL DEFAULT '',
    channel       text  NOT NULL,
    version       text  NOT NULL,
    type          text  NOT NULL,
    blob          bytea,
    PRIMARY KEY (user_id, thread_id, checkpoint_ns, channel, version)
);

CREATE TABLE memory.checkpoint_writes (
    user_id       text    NOT NULL,
    thread_id     text    NOT NULL,
    checkpoint_ns text    NOT NULL DEFAULT '',
    checkpoint_id text    NOT NULL,
    task_id       text    NOT NULL,
    task_path     text    NOT NULL DEFAULT '',
    idx           integer NOT NULL,
    channel       text    NOT NULL,
    type          text,
    blob          bytea   NOT NULL,
    PRIMARY KEY (user_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

-- What checkpoint_list and checkpoint_get answer: a checkpoint, its blobs and its pending writes.
CREATE TYPE memory.checkpoint_tuple AS (
    thread_id            text,
    checkpoint_ns        text,
    checkpoint_id        text,
    parent_checkpoint_id text,
    checkpoint           jsonb,
    metadata             jsonb,
    created_at           timestamptz,
    channel_values       bytea[],
    pending_writes       bytea[]
);

-- A namespace or checkpoint id as an argument: not NULL (22004), at most 200 characters
-- (22001), an id not empty (22023).
CREATE FUNCTION memory._checkpoint_key(arg text, v text, may_be_empty boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF v IS NULL THEN
        RAISE EXCEPTION '% must not be null', arg USING ERRCODE = '22004';
    ELSIF v = '' AND NOT may_be_empty THEN
        RAISE EXCEPTION '% must not be empty', arg USING ERRCODE = '22023';
    ELSIF length(v) > 200 THEN
        RAISE EXCEPTION '% is longer than 200 characters', arg USING ERRCODE = '22001';
    END IF;
    RETURN v;
END $$;

-- Blobs of channels whose version no checkpoint of the thread and namespace names any more:
-- what checkpoint_delete_runs and checkpoint_prune leave behind, deleted so that what a
-- checkpoint said goes with it.
-- PL/pgSQL, the tenant in a variable: Citus routes a statement by a value it can see, and plans
-- no SQL function with parameters (docs/citus.md).
CREATE FUNCTION memory._checkpoint_orphans(u text, threads text[]) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM memory.checkpoint_blobs b
    WHERE b.user_id = u AND b.thread_id = ANY (threads)
      AND NOT EXISTS (SELECT 1 FROM memory.checkpoint_steps s
                      WHERE s.user_id = u AND s.thread_id = b.thread_id
                        AND s.checkpoint_ns = b.checkpoint_ns
                        AND s.checkpoint -> 'channel_versions' ->> b.channel = b.version);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- checkpoint_put(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint,
-- metadata, channels, versions, types, blobs, user_id) -> jsonb {thread_id, checkpoint_ns,
-- checkpoint_id}: the checkpoint (replaced if its id is there) and its channels' blobs (the
-- four arrays in step; a version already stored is kept). Everything in one statement's
-- transaction; sizes together within memory_ext.max_value_bytes (22001).
CREATE FUNCTION checkpoint_put(thread_id text, checkpoint_ns text, checkpoint_id text,
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

-- checkpoint_put_writes(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
-- channels, types, blobs, replace, user_id) -> integer: a task's writes against a checkpoint
-- (the arrays in step). A write whose (task_id, idx) is there is kept, or replaced when
-- `replace` (LangGraph replaces its special writes: errors, interrupts, resumes). The number
-- of writes stored.
CREATE FUNCTION checkpoint_put_writes(thread_id text, checkpoint_ns text, checkpoint_id text,
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

-- checkpoint_list(thread_id, checkpoint_ns, checkpoint_id, filter, before, limit, user_id):
-- the tenant's checkpoints, newest first (by id: LangGraph's ids sort by time), each with its
-- blobs (`channel_values`: rows of [channel, type, blob] as bytea) and its pending writes
-- (`pending_writes`: rows of [task_id, channel, type, blob], in the order LangGraph applies
-- them: task_path, task_id, idx). NULL thread_id: every thread; NULL checkpoint_ns: every
-- namespace; `filter`: metadata containing it (jsonb @>); `before`: ids below it. Ids and
-- paths compare byte by byte (COLLATE "C"), as the frameworks compare strings.
CREATE FUNCTION checkpoint_list(thread_id text DEFAULT NULL, checkpoint_ns text DEFAULT NULL,
                                checkpoint_id text DEFAULT NULL, filter jsonb DEFAULT NULL,
                                before text DEFAULT NULL, "limit" integer DEFAULT NULL,
                                user_id text DEFAULT NULL)
RETURNS SETOF memory.checkpoint_tuple
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    u text := memory.resolve_tenant(user_id);
BEGIN
    IF "limit" < 0 THEN
        RAISE EXCEPTION 'limit must not be negative' USING ERRCODE = '22023';
    ELSIF filter IS NOT NULL AND jsonb_typeof(filter) <> 'object' THEN
        RAISE EXCEPTION 'filter must be a JSON object' USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
    SELECT s.thread_id, s.checkpoint_ns, s.checkpoint_id, s.parent_checkpoint_id, s.checkpoint, s.metadata,
           s.created_at,
           -- The blob of each channel at the version the checkpoint names. No set-returning
           -- function in this subquery: Citus cannot send one that refers to the outer row.
           (SELECT array_agg(ARRAY[convert_to(b.channel, 'UTF8'), convert_to(b.type, 'UTF8'), b.blob]
                             ORDER BY b.channel COLLATE "C")
              FROM memory.checkpoint_blobs b
             WHERE b.user_id = s.user_id AND b.thread_id = s.thread_id AND b.checkpoint_ns = s.checkpoint_ns
               AND b.version = s.checkpoint -> 'channel_versions' ->> b.channel),
           (SELECT array_agg(ARRAY[convert_to(w.task_id, 'UTF8'), convert_to(w.channel, 'UTF8'),
                                   convert_to(coalesce(w.type, ''), 'UTF8'), w.blob]
                             ORDER BY w.task_path COLLATE "C", w.task_id COLLATE "C", w.idx)
              FROM memory.checkpoint_writes w
             WHERE w.user_id = s.user_id AND w.thread_id = s.thread_id AND w.checkpoint_ns = s.checkpoint_ns
               AND w.checkpoint_id = s.checkpoint_id)
    FROM memory.checkpoint_steps s
    WHERE s.user_id = u
      AND (checkpoint_list.thread_id IS NULL OR s.thread_id = checkpoint_list.thread_id)
      AND (checkpoint_list.checkpoint_ns IS NULL OR s.checkpoint_ns = checkpoint_list.checkpoint_ns)
      AND (checkpoint_list.checkpoint_id IS NULL OR s.checkpoint_id = checkpoint_list.checkpoint_id)
      AND (filter IS NULL OR s.metadata @> filter)
      AND (before IS NULL OR s.checkpoint_id COLLATE "C" < before COLLATE "C")
    ORDER BY s.checkpoint_id COLLATE "C" DESC, s.thread_id COLLATE "C", s.checkpoint_ns COLLATE "C"
    LIMIT "limit";
END
$$;

-- checkpoint_get(thread_id, checkpoint_ns, checkpoint_id, user_id): one checkpoint as
-- checkpoint_list gives it: that id, or the thread's latest in the namespace when checkpoint_id
-- is NULL. No row when there is none.
CREATE FUNCTION checkpoint_get(thread_id text, checkpoint_ns text DEFAULT '', checkpoint_id text DEFAULT NULL,
                               user_id text DEFAULT NULL)
RETURNS SETOF memory.checkpoint_tuple
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY SELECT * FROM checkpoint_list(memory.checkpoint_thread(thread_id),
                                               memory._checkpoint_key('checkpoint_ns', checkpoint_ns, true),
                                               checkpoint_id, NULL, NULL, 1, user_id);
END
$$;

-- checkpoint_delete_thread(thread_id, user_id) -> bigint: every checkpoint of the thread, in
-- every namespace, with its blobs and writes, and checkpoint_save's state of it. Rows deleted.
CREATE FUNCTION checkpoint_delete_thread(thread_id text, user_id text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u     text := memory.resolve_tenant(user_id);
    t     text := memory.checkpoint_thread(thread_id);
    n     bigint;
    total bigint := 0;
BEGIN
    DELETE FROM memory.checkpoint_writes w WHERE w.user_id = u AND w.thread_id = t;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    DELETE FROM memory.checkpoint_blobs b WHERE b.user_id = u AND b.thread_id = t;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    DELETE FROM memory.checkpoint_steps s WHERE s.user_id = u AND s.thread_id = t;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    DELETE FROM memory.checkpoints c WHERE c.user_id = u AND c.thread_id = t;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    RETURN total;
END
$$;

-- checkpoint_delete_runs(run_ids, user_id) -> bigint: the checkpoints LangGraph's runs made
-- (metadata.run_id), with their writes and the blobs no other checkpoint names. Rows deleted.
CREATE FUNCTION checkpoint_delete_runs(run_ids text[], user_id text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u       text := memory.resolve_tenant(user_id);
    threads text[];
    n       bigint;
    total   bigint := 0;
BEGIN
    IF run_ids IS NULL OR cardinality(run_ids) = 0 THEN
        RETURN 0;
    END IF;
    -- Statement by statement, each naming the tenant (no data-modifying CTE: on Citus each is
    -- then a router statement on the tenant's shard group).
    SELECT array_agg(DISTINCT s.thread_id) INTO threads
      FROM memory.checkpoint_steps s WHERE s.user_id = u AND s.metadata ->> 'run_id' = ANY (run_ids);
    IF threads IS NULL THEN
        RETURN 0;
    END IF;
    DELETE FROM memory.checkpoint_writes w
    WHERE w.user_id = u AND w.thread_id = ANY (threads)
      AND EXISTS (SELECT 1 FROM memory.checkpoint_steps s
                  WHERE s.user_id = u AND s.thread_id = w.thread_id AND s.checkpoint_ns = w.checkpoint_ns
                    AND s.checkpoint_id = w.checkpoint_id AND s.metadata ->> 'run_id' = ANY (run_ids));
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    DELETE FROM memory.checkpoint_steps s WHERE s.user_id = u AND s.metadata ->> 'run_id' = ANY (run_ids);
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    RETURN total + memory._checkpoint_orphans(u, threads);
END
$$;

-- checkpoint_copy_thread(source_thread_id, target_thread_id, user_id) -> bigint: every
-- checkpoint of one thread, with its blobs and writes, into another (rows already there are
-- kept). Rows copied.
CREATE FUNCTION checkpoint_copy_thread(source_thread_id text, target_thread_id text, user_id text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u     text := memory.resolve_tenant(user_id);
    src   text := memory.checkpoint_thread(source_thread_id);
    dst   text := memory.checkpoint_thread(target_thread_id);
    n     bigint;
    total bigint := 0;
BEGIN
    IF src = dst THEN
        RETURN 0;
    END IF;
    INSERT INTO memory.checkpoint_steps (user_id, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                                         checkpoint, metadata, created_at)
    SELECT s.user_id, dst, s.checkpoint_ns, s.checkpoint_id, s.parent_checkpoint_id, s.checkpoint, s.metadata,
           s.created_at
    FROM memory.checkpoint_steps s WHERE s.user_id = u AND s.thread_id = src
    ON CONFLICT ON CONSTRAINT checkpoint_steps_pkey DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    INSERT INTO memory.checkpoint_blobs (user_id, thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT b.user_id, dst, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
    FROM memory.checkpoint_blobs b WHERE b.user_id = u AND b.thread_id = src
    ON CONFLICT ON CONSTRAINT checkpoint_blobs_pkey DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    INSERT INTO memory.checkpoint_writes (user_id, thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
                                          channel, type, blob)
    SELECT w.user_id, dst, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
    FROM memory.checkpoint_writes w WHERE w.user_id = u AND w.thread_id = src
    ON CONFLICT ON CONSTRAINT checkpoint_writes_pkey DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    RETURN total;
END
$$;

-- checkpoint_prune(thread_ids, strategy, user_id) -> bigint: 'keep_latest' keeps each
-- namespace's newest checkpoint of each thread (with its writes) and deletes the others;
-- 'delete' deletes every checkpoint of the threads. Blobs no kept checkpoint names go too.
-- Rows deleted. (A graph with LangGraph's DeltaChannel rebuilds such a channel from older
-- checkpoints' writes: prune it with 'delete' or not at all; docs/api.md "Checkpoints".)
CREATE FUNCTION checkpoint_prune(thread_ids text[], strategy text DEFAULT 'keep_latest', user_id text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    u     text := memory.resolve_tenant(user_id);
    n     bigint;
    total bigint := 0;
BEGIN
    IF strategy IS NULL OR strategy NOT IN ('keep_latest', 'delete') THEN
        RAISE EXCEPTION 'strategy must be ''keep_latest'' or ''delete''' USING ERRCODE = '22023';
    ELSIF thread_ids IS NULL OR cardinality(thread_ids) = 0 THEN
        RETURN 0;
    ELSIF array_position(thread_ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'thread_ids must not hold NULL' USING ERRCODE = '22004';
    END IF;
    IF strategy = 'delete' THEN
        SELECT coalesce(sum(checkpoint_delete_thread(t, u)), 0) INTO total FROM unnest(thread_ids) t;
        RETURN total;
    END IF;
    -- What has a newer checkpoint in its thread and namespace goes: the writes, then the
    -- checkpoints (statement by statement, as checkpoint_delete_runs).
    DELETE FROM memory.checkpoint_writes w
    WHERE w.user_id = u AND w.thread_id = ANY (thread_ids)
      AND EXISTS (SELECT 1 FROM memory.checkpoint_steps s
                  WHERE s.user_id = u AND s.thread_id = w.thread_id AND s.checkpoint_ns = w.checkpoint_ns
                    AND s.checkpoint_id COLLATE "C" > w.checkpoint_id COLLATE "C");
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    DELETE FROM memory.checkpoint_steps s
    WHERE s.user_id = u AND s.thread_id = ANY (thread_ids)
      AND EXISTS (SELECT 1 FROM memory.checkpoint_steps l
                  WHERE l.user_id = u AND l.thread_id = s.thread_id AND l.checkpoint_ns = s.checkpoint_ns
                    AND l.checkpoint_id COLLATE "C" > s.checkpoint_id COLLATE "C");
    GET DIAGNOSTICS n = ROW_COUNT; total := total + n;
    RETURN total + memory._checkpoint_orphans(u, thread_ids);
END
$$;

SELECT pg_catalog.pg_extension_config_dump('memory.checkpoint_steps', '');
SELECT pg_catalog.pg_extension_config_dump('memory.checkpoint_blobs', '');
SELECT pg_catalog.pg_extension_config_dump('memory.checkpoint_writes', '');
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['checkpoint_steps', 'checkpoint_blobs', 'checkpoint_writes'] LOOP
        EXECUTE format('ALTER TABLE memory.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON memory.%I
                            USING (user_id = memory.current_tenant())
                            WITH CHECK (user_id = memory.current_tenant())', t);
    END LOOP;
END $$;
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.checkpoint_steps, memory.checkpoint_blobs, memory.checkpoint_writes
TO PUBLIC;

-------------------------------------------------------------------------------- export and import
-- memory_export, memory_export_rows and memory_import carry the store and the checkpoints too
-- (sections store_items, store_vectors without vectors, checkpoint_steps, checkpoint_blobs,
-- checkpoint_writes).
-------------------------------------------------------------------------------- entities (issue 38)
-- Entities (0.12.0; docs/design.md "Entities"): the people, places, organisations, projects and
-- things memories are about, each with its canonical name, its type and the other names it is
-- known by. Written by memory_write as memories are written (crates/memory_core/src/entities.rs
-- resolves the names), merged and split by SQL; an entity no memory mentions any more is
-- deleted with its last link (src/store/entities.rs), so a deleted memory leaves no name behind.
CREATE TABLE memory.entities (
    user_id    text        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    name       text        NOT NULL CHECK (name <> '' AND length(name) <= 100),
    type       text        NOT NULL DEFAULT 'thing'
                           CHECK (type IN ('person', 'place', 'organization', 'project', 'thing')),
    aliases    text[]      NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id)
);
-- Which memories mention which entity.
CREATE TABLE memory.entity_links (
    user_id   text NOT NULL,
    entity_id uuid NOT NULL,
    item_id   uuid NOT NULL,
    PRIMARY KEY (user_id, entity_id, item_id),
    FOREIGN KEY (user_id, entity_id) REFERENCES memory.entities ON DELETE CASCADE,
    FOREIGN KEY (user_id, item_id) REFERENCES memory.items ON DELETE CASCADE
);
CREATE INDEX entity_links_item_idx ON memory.entity_links (user_id, item_id);
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['entities', 'entity_links'] LOOP
        EXECUTE format('ALTER TABLE memory.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON memory.%I
                            USING (user_id = memory.current_tenant())
                            WITH CHECK (user_id = memory.current_tenant())', t);
    END LOOP;
END $$;
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.entities, memory.entity_links TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memory.entities', '');
SELECT pg_catalog.pg_extension_config_dump('memory.entity_links', '');

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
        SELECT 16, 'store_vectors', to_jsonb(v) - 'user_id' - 'embedding' - 'embedding_model',
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
    ) x
    ORDER BY o, n;
END
$$;

CREATE OR REPLACE FUNCTION memory._import_sections() RETURNS TABLE (section text, tbl regclass)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    VALUES ('agents', 'memory.agents'::regclass), ('threads', 'memory.threads'), ('blocks', 'memory.blocks'),
           ('memories', 'memory.items'), ('relations', 'memory.relations'), ('messages', 'memory.messages'),
           ('history', 'memory.history'), ('categories', 'memory.categories'),
           ('allowlists', 'memory.allowlists'), ('checkpoints', 'memory.checkpoints'),
           ('details', 'memory.details'), ('files', 'memory.files'), ('events', 'memory.events'),
           ('proposals', 'memory.proposals'), ('store_items', 'memory.store_items'),
           ('store_vectors', 'memory.store_vectors'), ('checkpoint_steps', 'memory.checkpoint_steps'),
           ('checkpoint_blobs', 'memory.checkpoint_blobs'), ('checkpoint_writes', 'memory.checkpoint_writes'),
           ('entities', 'memory.entities'), ('entity_links', 'memory.entity_links')
$$;

-------------------------------------------------------------------------------- statistics
-- Who made each call, in memory.events (sql/schema.sql). Guarded, as the changes above: on Citus
-- the coordinator sends the ALTER on to every node, where the script runs as well.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'memory.events'::regclass
                                              AND attname = 'actor' AND NOT attisdropped) THEN
        ALTER TABLE memory.events ADD COLUMN actor text;
    END IF;
END $$;

-- What a memory replaced, by index (sql/schema.sql says why). Guarded: on Citus the script runs
-- on every node, and the coordinator's index reaches the shards by itself.
DO $$
BEGIN
    IF to_regclass('memory.items_superseded_by_idx') IS NULL THEN
        CREATE INDEX items_superseded_by_idx ON memory.items (user_id, superseded_by) WHERE superseded_by IS NOT NULL;
        PERFORM memory._name_partition_indexes('memory.items_superseded_by_idx');
    END IF;
END $$;

-- Who made a change, for history rows and consent decisions: the role that issued the
-- statement. Not a hint: an audit trail names who acted, not who a session says acted. A role
-- that serves several people (the gateway's inspector, one per token) adds in parentheses whom
-- it acts for, with memory_ext.on_behalf_of (0.12.0): `memory_mcp (inspector: ops)`. The role
-- comes first and is Postgres's own word, so a session can add to its name but never pass for
-- another role; the addition is cut to 100 characters and kept on one line.
CREATE OR REPLACE FUNCTION memory._actor() RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT memory._invoker()
           || coalesce(' (' || nullif(btrim(left(regexp_replace(current_setting('memory_ext.on_behalf_of', true),
                                                               '[[:cntrl:]]+', ' ', 'g'), 100)), '') || ')', '')
$$;

-- Statistics (0.12.0, docs/api.md "Statistics"): what the memory holds and what the background
-- work is doing, for the people who run it. memory_overview is one tenant's page of it (the
-- inspector's overview, crates/memory_gateway/src/inspect/); memory.stats is every tenant's, for
-- the operator's monitoring (postgres_exporter, docs/monitoring/).

-- The worker's jobs without their error texts: a job runs for every tenant, so its last error
-- may name another tenant's rows. SECURITY DEFINER: tenants cannot read memory.worker_jobs.
CREATE FUNCTION memory._worker_summary()
RETURNS TABLE (job text, scheduled boolean, last_finished_at timestamptz, last_duration_ms double precision,
               runs bigint, failures bigint, last_error_at timestamptz, requested_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT n.job,
           n.job = ANY (string_to_array(replace(lower(current_setting('memory_ext.worker_jobs', true)), ' ', ''), ',')),
           j.last_finished_at, j.last_duration_ms, coalesce(j.runs, 0), coalesce(j.failures, 0),
           j.last_error_at, j.requested_at
    FROM unnest(memory._worker_job_names()) AS n(job)
    LEFT JOIN memory.worker_jobs j ON j.job = n.job
    ORDER BY n.job
$$;

-- memory_overview(user_id) -> jsonb: the tenant's memory at a glance, in one call (one scan of
-- its memories, grouped every way at once). SECURITY INVOKER: row-level security applies; a
-- user_id other than the current tenant is 42501. PL/pgSQL: Citus plans no SQL function with
-- parameters (docs/citus.md).
CREATE FUNCTION memory_overview(user_id text DEFAULT NULL, days integer DEFAULT 30)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    tenant text := memory.resolve_tenant(memory_overview.user_id);
    since  date;
    groups jsonb;
    item_backlog bigint;
    result jsonb;
BEGIN
    IF days IS NULL OR days < 1 OR days > 366 THEN
        RAISE EXCEPTION 'days must be between 1 and 366, not %', days USING ERRCODE = '22023';
    END IF;
    since := (now() AT TIME ZONE 'UTC')::date - (days - 1);
    -- Every count of the memories from one pass over them (at 100,000 memories a pass is about
    -- 100 ms: the overview makes one).
    SELECT jsonb_build_object(
               'total', coalesce(sum(n) FILTER (WHERE g = 15), 0),
               'by_state', coalesce(jsonb_object_agg(state, n) FILTER (WHERE g = 7), '{}'),
               'by_kind', coalesce(jsonb_object_agg(kind, n) FILTER (WHERE g = 11), '{}'),
               'active_by_kind', coalesce(jsonb_object_agg(kind, active) FILTER (WHERE g = 11 AND active > 0), '{}'),
               'by_category', coalesce(jsonb_agg(jsonb_build_object('category', category, 'n', n)
                                                 ORDER BY n DESC, category) FILTER (WHERE g = 13), '[]'),
               'per_day', coalesce(jsonb_agg(jsonb_build_object('day', day, 'n', n) ORDER BY day)
                                   FILTER (WHERE g = 14 AND day >= since), '[]')),
           coalesce(sum(unembedded) FILTER (WHERE g = 15), 0)
      INTO groups, item_backlog
    FROM (SELECT GROUPING(i.state, i.kind, i.category, (i.created_at AT TIME ZONE 'UTC')::date) AS g,
                 i.state, i.kind, coalesce(i.category, '') AS category,
                 (i.created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n,
                 count(*) FILTER (WHERE i.state = 'active') AS active,
                 count(*) FILTER (WHERE i.state = 'active' AND i.embedding IS NULL) AS unembedded
          FROM memory.items i
          WHERE i.user_id = tenant
          GROUP BY GROUPING SETS ((), (i.state), (i.kind),
                                  (i.category) , ((i.created_at AT TIME ZONE 'UTC')::date))) s;
    -- Every day of the period, the days without a memory as 0 (a chart's gaps are days). Days
    -- compared as dates: a jsonb date is ISO text whatever the session's DateStyle.
    groups := jsonb_set(groups, '{per_day}', (
        SELECT jsonb_agg(jsonb_build_object('day', d.day, 'n',
                   coalesce((SELECT (x ->> 'n')::bigint FROM jsonb_array_elements(groups -> 'per_day') x
                             WHERE (x ->> 'day')::date = d.day), 0)) ORDER BY d.day)
        FROM (SELECT g::date AS day
              FROM generate_series(since::timestamp, (now() AT TIME ZONE 'UTC')::date::timestamp, interval '1 day') g) d));
    result := jsonb_build_object(
        'user_id', tenant,
        'days', days,
        'memories', groups,
        'threads', (SELECT coalesce(jsonb_agg(t ORDER BY t.updated_at DESC, t.thread_id), '[]') FROM
            (SELECT th.thread_id, th.agent_id, th.updated_at, th.revision, th.last_seq AS messages,
                    c.context_tokens, c.context_messages
             FROM (SELECT * FROM memory.threads th WHERE th.user_id = tenant
                   ORDER BY th.updated_at DESC, th.thread_id LIMIT 20) th,
                  LATERAL (SELECT coalesce(sum(m.token_count), 0) AS context_tokens, count(*) AS context_messages
                           FROM memory.messages m
                           WHERE m.user_id = tenant AND m.thread_id = th.thread_id AND m.in_context) c) t),
        'proposals_pending', (SELECT count(*) FROM memory.proposals p
                              WHERE p.user_id = tenant AND p.status = 'pending' AND p.expires_at > now()),
        'embedding', jsonb_build_object(
            'backlog', jsonb_build_object(
                'item', item_backlog,
                'message', (SELECT count(*) FROM memory.messages m
                            WHERE m.user_id = tenant AND m.embedding IS NULL),
                'file', (SELECT count(*) FROM memory.files f
                         WHERE f.user_id = tenant AND f.embedding IS NULL)),
            'failures', (SELECT jsonb_build_object('retrying', count(*) FILTER (WHERE NOT f.gave_up),
                                                   'gave_up', count(*) FILTER (WHERE f.gave_up))
                         FROM memory.embedding_failures f WHERE f.user_id = tenant),
            'recent_failures', (SELECT coalesce(jsonb_agg(f ORDER BY f.last_attempt_at DESC), '[]') FROM
                (SELECT f.target, f.row_id, f.attempts, f.gave_up, f.last_error, f.last_attempt_at
                 FROM memory.embedding_failures f WHERE f.user_id = tenant
                 ORDER BY f.last_attempt_at DESC LIMIT 5) f)),
        'extraction', (SELECT jsonb_build_object(
                           'threads_failing', count(*) FILTER (WHERE e.last_error IS NOT NULL),
                           'last_run_at', max(e.last_run_at),
                           'errors', coalesce(jsonb_agg(jsonb_build_object('thread_id', e.thread_id,
                                                                           'last_error', e.last_error,
                                                                           'attempts', e.attempts))
                                              FILTER (WHERE e.last_error IS NOT NULL), '[]'))
                       FROM memory.extractions e WHERE e.user_id = tenant),
        'runs_waiting', (SELECT count(*) FROM memory.run_ends r WHERE r.user_id = tenant),
        'llm_usage', (SELECT coalesce(jsonb_agg(u ORDER BY u.day), '[]') FROM
            (SELECT d.day, coalesce(x.calls, 0) AS extraction_calls, coalesce(x.tokens_in, 0) AS tokens_in,
                    coalesce(x.tokens_out, 0) AS tokens_out, coalesce(x.writes, 0) AS extraction_writes,
                    coalesce(c.llm_calls, 0) AS consolidation_calls
             FROM (SELECT DISTINCT day FROM (
                       SELECT x.day FROM memory.extraction_usage x WHERE x.user_id = tenant AND x.day >= since
                       UNION SELECT c.day FROM memory.consolidation_usage c WHERE c.user_id = tenant AND c.day >= since) a) d
             LEFT JOIN memory.extraction_usage x ON x.user_id = tenant AND x.day = d.day
             LEFT JOIN memory.consolidation_usage c ON c.user_id = tenant AND c.day = d.day) u),
        'events', (SELECT coalesce(jsonb_agg(e ORDER BY e.ts DESC), '[]') FROM
            (SELECT e.ts, e.node, e.op, e.status, e.thread_id, e.memory_id, e.category, e.sqlstate, e.actor
             FROM memory.events e WHERE e.user_id = tenant ORDER BY e.ts DESC LIMIT 20) e));
    -- Apart: the worker's table is not the tenant's (on Citus, a local table beside the
    -- distributed ones).
    RETURN result || jsonb_build_object('worker',
        (SELECT coalesce(jsonb_agg(w ORDER BY w.job), '[]') FROM memory._worker_summary() w));
END
$$;

-- memory.stats() -> rows (tenant, metric, label, value): every tenant's statistics, for an
-- operator's monitoring; postgres_exporter reads it with docs/monitoring/queries.yaml. Rows with
-- tenant '' are the database's (the worker's jobs, dead rows). SECURITY DEFINER, executable by
-- the extension's owner only (it reads across tenants): grant it to the monitoring role.
CREATE FUNCTION memory.stats()
RETURNS TABLE (tenant text, metric text, label text, value double precision)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT i.user_id, 'memories', i.state, count(*)::float8
    FROM memory.items i GROUP BY i.user_id, i.state
    UNION ALL
    SELECT i.user_id, 'embedding_backlog', 'item', count(*)::float8
    FROM memory.items i WHERE i.state = 'active' AND i.embedding IS NULL GROUP BY i.user_id
    UNION ALL
    SELECT m.user_id, 'embedding_backlog', 'message', count(*)::float8
    FROM memory.messages m WHERE m.embedding IS NULL GROUP BY m.user_id
    UNION ALL
    SELECT f.user_id, 'embedding_backlog', 'file', count(*)::float8
    FROM memory.files f WHERE f.embedding IS NULL GROUP BY f.user_id
    UNION ALL
    SELECT f.user_id, 'embedding_failures', CASE WHEN f.gave_up THEN 'gave_up' ELSE 'retrying' END, count(*)::float8
    FROM memory.embedding_failures f GROUP BY 1, 3
    UNION ALL
    SELECT p.user_id, 'proposals_pending', p.policy, count(*)::float8
    FROM memory.proposals p WHERE p.status = 'pending' AND p.expires_at > now() GROUP BY 1, 3
    UNION ALL
    SELECT r.user_id, 'runs_waiting', '', count(*)::float8 FROM memory.run_ends r GROUP BY 1
    UNION ALL
    SELECT e.user_id, 'extraction_threads_failing', '', count(*)::float8
    FROM memory.extractions e WHERE e.last_error IS NOT NULL GROUP BY 1
    UNION ALL
    SELECT x.user_id, 'llm_tokens_today', v.label, v.value
    FROM memory.extraction_usage x,
         LATERAL (VALUES ('in', x.tokens_in::float8), ('out', x.tokens_out::float8),
                         ('extraction_calls', x.calls::float8), ('extraction_writes', x.writes::float8)) v(label, value)
    WHERE x.day = (now() AT TIME ZONE 'UTC')::date
    UNION ALL
    SELECT c.user_id, 'llm_tokens_today', 'consolidation_calls', c.llm_calls::float8
    FROM memory.consolidation_usage c WHERE c.day = (now() AT TIME ZONE 'UTC')::date
    UNION ALL
    -- Each job's seconds since it last finished (lag; -1 for a job that never ran) and failures.
    SELECT '', v.metric, w.job, v.value
    FROM memory._worker_summary() w,
         LATERAL (VALUES ('worker_job_lag_seconds', coalesce(extract(epoch FROM now() - w.last_finished_at)::float8, -1)),
                         ('worker_job_failures', w.failures::float8)) v(metric, value)
    UNION ALL
    -- The last error's text in the label (cut to 200 characters), its time as the value.
    SELECT '', 'worker_job_last_error', j.job || ': ' || left(regexp_replace(j.last_error, '\s+', ' ', 'g'), 200),
           extract(epoch FROM j.last_error_at)::float8
    FROM memory.worker_jobs j WHERE j.last_error IS NOT NULL
    UNION ALL
    SELECT '', 'dead_rows', s.relname::text, s.n_dead_tup::float8
    FROM pg_catalog.pg_stat_all_tables s WHERE s.schemaname = 'memory'
$$;
REVOKE ALL ON FUNCTION memory.stats() FROM PUBLIC;

-------------------------------------------------------------------------------- the seeds complete (issue 38)
-- Detail memory keeps the agent a detail was stored for (seed 002 §4.3).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'memory.details'::regclass
                   AND attname = 'agent_id' AND NOT attisdropped) THEN
        ALTER TABLE memory.details ADD COLUMN agent_id text;
    END IF;
END $$;
DROP FUNCTION memory_ref_store(text, text, text, text, text, jsonb);
DROP FUNCTION memory.ref_store(text, text, text, text, text, jsonb);
DROP FUNCTION memory_capture(text, text, integer, text, text);
CREATE  FUNCTION "memory_capture"(
	"command" TEXT, /* Option < & str > */
	"output" TEXT, /* Option < & str > */
	"threshold_tokens" INT DEFAULT 500, /* Option < i32 > */
	"user_id" TEXT DEFAULT NULL, /* Option < & str > */
	"thread_id" TEXT DEFAULT NULL, /* Option < & str > */
	"agent_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_capture_wrapper';

CREATE  FUNCTION memory."ref_store"(
	"content" TEXT, /* Option < & str > */
	"description" TEXT, /* Option < & str > */
	"kind" TEXT, /* Option < & str > */
	"user_id" TEXT, /* Option < & str > */
	"thread_id" TEXT, /* Option < & str > */
	"metadata" jsonb, /* Option < Json > */
	"agent_id" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ref_store_wrapper';

CREATE FUNCTION memory_ref_store(content text, description text, type text DEFAULT 'command_output',
                                 user_id text DEFAULT NULL, thread_id text DEFAULT NULL,
                                 metadata jsonb DEFAULT '{}', agent_id text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql VOLATILE
AS $$ SELECT memory.ref_store($1, $2, $3, $4, $5, $6, $7) $$;


CREATE  FUNCTION "memory_ref_search"(
	"query" TEXT, /* Option < & str > */
	"thread_id" TEXT DEFAULT NULL, /* Option < & str > */
	"agent_id" TEXT DEFAULT NULL, /* Option < & str > */
	"limit" INT DEFAULT 5, /* Option < i32 > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TABLE (
	"key" TEXT,  /* String */
	"description" TEXT,  /* String */
	"type" TEXT,  /* String */
	"thread" TEXT,  /* Option < String > */
	"agent" TEXT,  /* Option < String > */
	"chars" bigint,  /* i64 */
	"created_at" timestamp with time zone,  /* TimestampWithTimeZone */
	"score" double precision  /* f64 */
)
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_ref_search_wrapper';

-- conversation_search_date(start_date, end_date, thread_id, agent_id, limit, offset, user_id):
-- the messages sent between two days (both included, UTC), oldest first, in one thread, in the
-- threads an agent reads (its own and the user's unassigned ones), or in all of the tenant's
-- threads. MemGPT's time-based retrieval (seed 000 §1.7): "what did we discuss last Tuesday?"
-- needs neither a thread nor a query. The result names each message's thread (`thread`: a
-- column cannot share the `thread_id` argument's name). Paged by limit and offset: a listing,
-- not a ranking. PL/pgSQL: Citus plans no SQL function with parameters (docs/citus.md).
CREATE FUNCTION conversation_search_date(start_date date, end_date date,
                                         thread_id text DEFAULT NULL, agent_id text DEFAULT NULL,
                                         "limit" integer DEFAULT 100, "offset" integer DEFAULT 0,
                                         user_id text DEFAULT NULL)
RETURNS TABLE (id uuid, thread text, seq bigint, role text, content text, created_at timestamptz)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    tenant text := memory.resolve_tenant(conversation_search_date.user_id);
    t text := conversation_search_date.thread_id;
    a text := conversation_search_date.agent_id;
    lim integer := conversation_search_date."limit";
    skip integer := conversation_search_date."offset";
BEGIN
    IF start_date IS NULL OR end_date IS NULL THEN
        RAISE EXCEPTION 'start_date and end_date are required' USING ERRCODE = '22004';
    END IF;
    IF end_date < start_date THEN
        RAISE EXCEPTION 'end_date % is before start_date %', to_char(end_date, 'YYYY-MM-DD'), to_char(start_date, 'YYYY-MM-DD') USING ERRCODE = '22023';
    END IF;
    IF lim IS NULL OR lim < 1 OR lim > 1000 THEN
        RAISE EXCEPTION 'limit must be between 1 and 1000, not %', lim USING ERRCODE = '22023';
    END IF;
    IF skip IS NULL OR skip < 0 THEN
        RAISE EXCEPTION 'offset must be 0 or more, not %', skip USING ERRCODE = '22023';
    END IF;
    IF t IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory.threads th WHERE th.user_id = tenant AND th.thread_id = t) THEN
        RAISE EXCEPTION 'thread "%" not found', t USING ERRCODE = 'P0002';
    END IF;
    IF a IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory.agents ag WHERE ag.user_id = tenant AND ag.agent_id = a) THEN
        RAISE EXCEPTION 'agent "%" not found', a USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY
    SELECT m.id, m.thread_id, m.seq, m.role, m.content, m.created_at
    FROM memory.messages m
    WHERE m.user_id = tenant
      AND m.created_at >= (start_date::timestamp AT TIME ZONE 'UTC')
      AND m.created_at < ((end_date + 1)::timestamp AT TIME ZONE 'UTC')
      AND (t IS NULL OR m.thread_id = t)
      AND (t IS NOT NULL OR a IS NULL OR m.thread_id IN (
              SELECT th.thread_id FROM memory.threads th
              WHERE th.user_id = tenant AND (th.agent_id = a OR th.agent_id IS NULL)))
    ORDER BY m.created_at, m.thread_id, m.seq
    LIMIT lim OFFSET skip;
END $$;

-- Compaction the agent steers (seed 000 §3.2-3.4, §4.5; seed 004 §2.2): pinned messages,
-- compact_thread by range, before a message and with a focus, context_messages with `pinned`,
-- set_message_ids and message_pin.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'memory.messages'::regclass
                   AND attname = 'pinned' AND NOT attisdropped) THEN
        ALTER TABLE memory.messages ADD COLUMN pinned boolean NOT NULL DEFAULT false;
    END IF;
END $$;
DROP FUNCTION compact_thread(text, integer);
DROP FUNCTION context_messages(text, integer, integer);
CREATE  FUNCTION "compact_thread"(
	"thread_id" TEXT, /* Option < & str > */
	"keep_last" INT DEFAULT 10, /* Option < i32 > */
	"from_seq" bigint DEFAULT NULL, /* Option < i64 > */
	"to_seq" bigint DEFAULT NULL, /* Option < i64 > */
	"before_seq" bigint DEFAULT NULL, /* Option < i64 > */
	"focus" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'compact_thread_wrapper';

CREATE  FUNCTION "context_messages"(
	"thread_id" TEXT, /* Option < & str > */
	"max_messages" INT DEFAULT NULL, /* Option < i32 > */
	"max_tokens" INT DEFAULT NULL /* Option < i32 > */
) RETURNS TABLE (
	"id" uuid,  /* pgrx :: Uuid */
	"seq" bigint,  /* i64 */
	"role" TEXT,  /* String */
	"content" TEXT,  /* String */
	"tokens" INT,  /* i32 */
	"is_summary" bool,  /* bool */
	"tool_calls" jsonb,  /* Option < JsonB > */
	"tool_call_id" TEXT,  /* Option < String > */
	"name" TEXT,  /* Option < String > */
	"created_at" timestamp with time zone,  /* Option < pgrx :: datum :: TimestampWithTimeZone > */
	"pinned" bool  /* bool */
)
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'context_messages_wrapper';

CREATE  FUNCTION "set_message_ids"(
	"thread_id" TEXT, /* Option < & str > */
	"message_ids" uuid[] /* :: std :: option :: Option < Vec < Option < pgrx :: Uuid > > > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'set_message_ids_wrapper';

CREATE  FUNCTION "message_pin"(
	"thread_id" TEXT, /* Option < & str > */
	"message_id" uuid, /* Option < pgrx :: Uuid > */
	"pinned" bool DEFAULT true /* Option < bool > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'message_pin_wrapper';


-- The theory-of-mind pass runs at most once a day per tenant (seed 003 §3).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'memory.extractions'::regclass
                   AND attname = 'tom_at' AND NOT attisdropped) THEN
        ALTER TABLE memory.extractions ADD COLUMN tom_at timestamptz;
    END IF;
END $$;

-- Memory files in recall (seed 001 §7.1, §9.1): memory_context takes how many memories and files.
DROP FUNCTION memory_context(text, text, text, integer);
CREATE  FUNCTION "memory_context"(
	"agent_id" TEXT, /* Option < & str > */
	"thread_id" TEXT, /* Option < & str > */
	"query" TEXT, /* Option < & str > */
	"budget_tokens" INT DEFAULT 2048, /* Option < i32 > */
	"memories" INT DEFAULT 3, /* Option < i32 > */
	"files" INT DEFAULT 3 /* Option < i32 > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_context_wrapper';


-- Entities: listing, merge, split, alias (src/api/entities.rs).
CREATE  FUNCTION "memory_entities"(
	"search" TEXT DEFAULT NULL, /* Option < & str > */
	"limit" INT DEFAULT 100, /* Option < i32 > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TABLE (
	"id" uuid,  /* pgrx :: Uuid */
	"name" TEXT,  /* String */
	"type" TEXT,  /* String */
	"aliases" TEXT[],  /* Vec < String > */
	"memories" bigint,  /* i64 */
	"updated_at" timestamp with time zone  /* TimestampWithTimeZone */
)
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_entities_wrapper';

CREATE  FUNCTION "memory_entity_merge"(
	"keep_id" uuid, /* Option < pgrx :: Uuid > */
	"merge_id" uuid, /* Option < pgrx :: Uuid > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_entity_merge_wrapper';

CREATE  FUNCTION "memory_entity_split"(
	"entity_id" uuid, /* Option < pgrx :: Uuid > */
	"alias" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_entity_split_wrapper';

CREATE  FUNCTION "memory_entity_alias"(
	"entity_id" uuid, /* Option < pgrx :: Uuid > */
	"alias" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_entity_alias_wrapper';

