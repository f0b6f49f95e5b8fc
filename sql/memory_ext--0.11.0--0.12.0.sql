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
