-- memory_ext 0.7.0 -> 0.8.0 (ALTER EXTENSION memory_ext UPDATE TO '0.8.0')
--
-- What changes, on Citus only (the functions change everywhere; plain Postgres behaves as before):
-- - A registered embedding model's HNSW indexes are made on the coordinator, whichever node's
--   copy of the registry fired its trigger: 0.6.0 and 0.7.0 made none on a coordinator that
--   holds a copy of the reference tables, so every vector search scanned the tenant's rows (new
--   memory._create_model_indexes; sql/embed.sql). The indexes missing on a cluster are made by
--   running SELECT memory_citus_distribute() again on the coordinator (docs/citus.md).
-- - A call's tenant hand-off to the workers also sends enable_seqscan = off, the setting its
--   retrieval statements are planned with on one node (sql/citus.sql).
-- No table changes.
--
-- On Citus, run ALTER EXTENSION on the coordinator: Citus runs it on every node.
-- client_min_messages: "already exists, skipping" is not the caller's business.
CREATE FUNCTION memory._create_model_indexes(p_model text, p_dims integer, p_type text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET client_min_messages = warning AS $$
DECLARE
    vschema text;
    suffix  text := left(md5(p_model), 12);
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
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.items USING hnsw ((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                   'items_emb_' || suffix, vschema, p_type, p_dims, vschema, p_type || '_cosine_ops', p_model);
    PERFORM memory._name_partition_indexes('memory.items_emb_' || suffix);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.messages USING hnsw ((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                   'messages_emb_' || suffix, vschema, p_type, p_dims, vschema, p_type || '_cosine_ops', p_model);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory.files USING hnsw ((embedding::%I.%I(%s)) %I.%I) WHERE embedding_model = %L',
                   'files_emb_' || suffix, vschema, p_type, p_dims, vschema, p_type || '_cosine_ops', p_model);
    IF citus THEN
        PERFORM set_config('citus.max_adaptive_executor_pool_size', pool, true);
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._create_model_indexes(text, integer, text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION memory._embedding_model_indexes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM memory._create_model_indexes(NEW.model_id, NEW.dims, NEW.index_type);
    RETURN NULL;
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
    typ := CASE WHEN p_dims <= 2000 THEN 'vector' WHEN p_dims <= 4000 THEN 'halfvec' END;
    INSERT INTO memory.embedding_models (model_id, dims, index_type) VALUES (p_model, p_dims, typ);
    -- On Citus the registry's trigger fires where its placements are, which need not include
    -- this node (the coordinator): its indexes are made here.
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._create_model_indexes(p_model, p_dims, typ);
    END IF;
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION memory._tenant_to_workers(tenant text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    caller  text := current_setting('citus.propagate_set_commands');
    seqscan text := current_setting('enable_seqscan');
BEGIN
    PERFORM set_config('citus.propagate_set_commands', 'local', true);
    EXECUTE format('SET LOCAL memory_ext.user_id = %L', tenant);
    SET LOCAL hnsw.iterative_scan = relaxed_order;
    SET LOCAL enable_seqscan = off;
    PERFORM set_config('citus.propagate_set_commands', caller, true);
    -- Not propagated: the coordinator's own statements (src/pg/vector.rs sets it around its
    -- retrieval statements there) and a caller's later ones keep the caller's value.
    PERFORM set_config('enable_seqscan', seqscan, true);
    PERFORM 1 FROM memory.threads WHERE user_id = tenant AND thread_id IS NULL FOR SHARE;
END $$;

-- The indexes 0.6.0 and 0.7.0 did not make on a Citus coordinator (on plain Postgres every
-- registered model has them: nothing to do). Rows read first, indexes made on this node. A
-- worker node, where Citus runs this script too, has nothing to make and may not read the
-- registry from inside it (a distributed query from a query on a shard).
DO $$
DECLARE
    m    record;
    here boolean := true;
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        EXECUTE 'SELECT citus_is_coordinator()' INTO here;
    END IF;
    IF NOT here THEN
        RETURN;
    END IF;
    FOR m IN SELECT model_id, dims, index_type FROM memory.embedding_models ORDER BY model_id LOOP
        PERFORM memory._create_model_indexes(m.model_id, m.dims, m.index_type);
    END LOOP;
END $$;
