-- memory_ext 0.11.0 -> 0.12.0 (ALTER EXTENSION memory_ext UPDATE TO '0.12.0')
--
-- The store (docs/api.md "Store"): LangGraph's BaseStore in SQL. New tables memory.store_items
-- and memory.store_vectors (row-level security, in pg_dump's output; on Citus
-- `SELECT memory_citus_distribute()` distributes them, docs/citus.md), their audit trigger
-- (history entity 'store'), and the functions store_put, store_get, store_delete,
-- store_search, store_list_namespaces and store_batch. memory_purge deletes expired items.

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

-------------------------------------------------------------------------------- store
-- As sql/store.sql.
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
    PRIMARY KEY (user_id, namespace, key),
    CONSTRAINT store_items_expiry CHECK ((ttl IS NULL) = (expires_at IS NULL))
);
CREATE INDEX store_items_updated_idx ON memory.store_items (user_id, updated_at DESC);
CREATE INDEX store_items_expires_idx ON memory.store_items (expires_at) WHERE expires_at IS NOT NULL;

-- One row per indexed text of an item: `field` is the path it came from (`$`, `title`,
-- `tags[*]#1`). `embedding_model` is the model the vector is of: the active model's id, or
-- 'client' for a vector the caller computed (the Python and TypeScript stores' own `embed`);
-- a search compares only vectors of its query's model and size. No vector yet: the backfill
-- embeds `text` with the active model.
CREATE TABLE memory.store_vectors (
    user_id         text   NOT NULL,
    namespace       text[] NOT NULL,
    key             text   NOT NULL,
    field           text   NOT NULL,
    text            text   NOT NULL,
    embedding       vector,
    embedding_model text,
    PRIMARY KEY (user_id, namespace, key, field),
    FOREIGN KEY (user_id, namespace, key) REFERENCES memory.store_items ON DELETE CASCADE
);
CREATE INDEX store_vectors_unembedded_idx ON memory.store_vectors (user_id) WHERE embedding IS NULL;

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
