-- The store (0.12.0, docs/api.md "Store"): namespaced key -> JSON documents, LangGraph's
-- BaseStore in SQL. A namespace is a text[] (labels are any text: nothing is joined, escaped or
-- matched with LIKE), inside a tenant. store_put writes the document and, for the fields it
-- indexes, one vector per text (memory.store_vectors, its text kept so that the backfill can
-- embed it later); store_search scores by cosine similarity against those vectors, absolute and
-- comparable across calls. An item with a `ttl` expires at updated_at + ttl (a read with
-- refresh_ttl pushes it back); an expired item is never returned and memory_purge (the
-- worker's) deletes it. The functions are src/api/store.rs; the statements
-- sql/queries/store_*.sql.
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
-- {path, op, value}). Equality is jsonb equality, false where `v` has no such field (a missing
-- path gives NULL, which bool_and would skip: 0.12.0 matched every item without the field); the
-- order operators compare numbers as numbers and strings as strings, and are false across types
-- (LangGraph's stores raise or say false).
CREATE FUNCTION memory._store_match(v jsonb, conds jsonb) RETURNS boolean
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
