-- Embedding storage that survives a model change.
--
-- # Design
-- `items.embedding` and `messages.embedding` are unsized `vector` columns and every row records
-- the model that embedded it (`embedding_model`). Each model gets its own partial HNSW index
-- over `embedding::vector(<dims>)` restricted to `embedding_model = '<model>'`, created the first
-- time a vector of that model is stored (memory._ensure_embedding_model). Switching model is
-- therefore a settings change: new writes use the new model and its new index at once; rows of
-- the old model keep their vectors (and stay findable by keyword) until memory_reembed() has
-- re-embedded them in the background; nothing is dropped and no table is rewritten.
-- Up to 2,000 dimensions the index is over `vector`, up to 4,000 over `halfvec` (pgvector's HNSW
-- limits); beyond that a model is stored but searched exactly. With memory_ext.embedding_precision
-- = half a model's indexes are over `halfvec` at any size up to 4,000 (half the index's memory,
-- docs/performance.md "Half precision"); the stored vectors keep full precision either way.
-- Searches cast to the type the registry records for the model (src/pg/vector.rs), so that the
-- planner matches its index; memory_embedding_reindex() moves a model between the two online.

-- Models this database has stored vectors of. No user_id: this describes the database's
-- configuration, not any tenant's data.
CREATE TABLE memory.embedding_models (
    model_id   text        PRIMARY KEY CHECK (model_id <> '' AND length(model_id) <= 200),
    dims       integer     NOT NULL CHECK (dims BETWEEN 1 AND 16000),
    index_type text        CHECK (index_type IN ('vector', 'halfvec')),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Rows whose embedding failed: the backfill retries them with backoff and gives up after
-- memory_ext.embedding_max_attempts, leaving the last error here for an operator. Deleting a
-- row here makes the backfill try again.
CREATE TABLE memory.embedding_failures (
    user_id         text        NOT NULL,
    target          text        NOT NULL CHECK (target IN ('item', 'message', 'file', 'store')),
    row_id          uuid        NOT NULL,
    model_id        text        NOT NULL,
    attempts        integer     NOT NULL DEFAULT 1 CHECK (attempts >= 1),
    last_error      text        NOT NULL,
    first_failed_at timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    gave_up         boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (user_id, target, row_id)
);
CREATE INDEX embedding_failures_gave_up_idx ON memory.embedding_failures (user_id, last_attempt_at DESC) WHERE gave_up;

-- The backfill's way in: rows without a vector, or with one from a model that is no longer
-- active. An exception to "user_id leads every index": the backfill works across tenants, and
-- `embedding_model IS NULL` / `= ANY(old models)` must be an index range scan, not a scan of
-- every tenant's rows.
CREATE INDEX items_embedding_model_idx ON memory.items (embedding_model);
SELECT memory._name_partition_indexes('memory.items_embedding_model_idx');
CREATE INDEX messages_embedding_model_idx ON memory.messages (embedding_model);

-- Most models a database may register. Each adds an index to every write, so a stray or
-- hostile stream of model names must not grow them without bound.
CREATE FUNCTION memory._max_embedding_models() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 16 $$;

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

-- Creates a registered model's partial HNSW indexes (when it has an index type), if missing.
-- Called by the trigger on the registry below, so that the indexes follow the registry wherever
-- its rows come from: the first write of a model (memory._ensure_embedding_model) or a restore.
-- pg_dump does not dump these indexes (they were made at run time, not by the extension's
-- script), but it dumps the registry (sql/backup.sql); restoring its rows brings every index
-- back. memory_citus_distribute() calls it for every registered model too.
--
-- On Citus the indexes are made on the coordinator's tables, which propagates them to every
-- shard; a worker node makes none. The registry is a reference table there, so its trigger
-- fires on each node's copy of it (a shard named embedding_models_<n>, the coordinator's
-- included): the node, not the table's name, decides. (0.6.0 and 0.7.0 went by the name, and
-- on a coordinator that holds a copy of the reference tables, as scripts/citus.sh sets it up,
-- made no HNSW index at all: every vector search scanned the tenant's rows.)
--
-- SECURITY DEFINER because index creation needs the tables' owner. Sound because it creates
-- exactly the indexes described above, quoted with format(%I/%L); not executable by PUBLIC.
-- client_min_messages: "already exists, skipping" is not the caller's business.
CREATE FUNCTION memory._create_model_indexes(p_model text, p_dims integer, p_type text) RETURNS void
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
REVOKE ALL ON FUNCTION memory._create_model_indexes(text, integer, text) FROM PUBLIC;

CREATE FUNCTION memory._embedding_model_indexes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM memory._create_model_indexes(NEW.model_id, NEW.dims, NEW.index_type);
    RETURN NULL;
END $$;
CREATE TRIGGER embedding_models_indexes AFTER INSERT ON memory.embedding_models FOR EACH ROW
EXECUTE FUNCTION memory._embedding_model_indexes();

-- Registers a model, once (its indexes come with the row, above). True when the model is
-- registered (now or before); false when the registry is full and it is not: the write path
-- then stores its row without a vector and records why (retried by the backfill), so a full
-- registry never loses a write.
--
-- SECURITY DEFINER because the registry is the owner's; not executable by PUBLIC: which model
-- a database stores vectors of is the operator's choice (memory_ext.embedding_* settings are
-- superuser-only), and the extension calls this as its owner from the write path
-- (src/pg/owner.rs). It refuses more than memory._max_embedding_models() models.
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
    typ := memory._model_index_type(p_dims, coalesce(current_setting('memory_ext.embedding_precision', true), 'full'));
    INSERT INTO memory.embedding_models (model_id, dims, index_type) VALUES (p_model, p_dims, typ);
    -- On Citus the registry's trigger fires where its placements are, which need not include
    -- this node (the coordinator): its indexes are made here.
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._create_model_indexes(p_model, p_dims, typ);
    END IF;
    RETURN true;
END $$;
REVOKE ALL ON FUNCTION memory._ensure_embedding_model(text, integer) FROM PUBLIC;

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

-- memory_embed(input) -> vector: the configured provider, for callers and tests.
-- memory_embed_batch(inputs) -> (ord, embedding): one provider call for many inputs.
-- SQL wrappers over memory.embed_array and memory.embed_batch_arrays (src/api/embed.rs), so that
-- the result is pgvector's own type (real[] -> vector is pgvector's cast); created with
-- pgvector's schema written into their bodies, which are resolved at call time under the
-- caller's search_path.
DO $do$
DECLARE
    vs text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                WHERE e.extname = 'vector');
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION memory_embed(input text) RETURNS %1$s.vector
        LANGUAGE sql VOLATILE PARALLEL RESTRICTED
        AS 'SELECT memory.embed_array(input)::%1$s.vector'
    $f$, vs);
    EXECUTE format($f$
        CREATE FUNCTION memory_embed_batch(inputs text[]) RETURNS TABLE (ord integer, embedding %1$s.vector)
        LANGUAGE sql VOLATILE PARALLEL RESTRICTED
        AS 'SELECT b.ord, b.embedding::%1$s.vector FROM memory.embed_batch_arrays(inputs) b'
    $f$, vs);
END
$do$;
