-- checkpoint_save(user_id, thread_id, data) -> jsonb {thread_id, created_at, updated_at}
-- checkpoint_load(user_id, thread_id) -> jsonb, NULL when the thread has no checkpoint
-- (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Checkpoints"). One row per tenant and thread in
-- memory.checkpoints, replaced by each save (created_at kept, updated_at moved). SQL, so that the
-- jsonb goes from the caller to the table without a round trip through Rust; row-level security
-- applies (SECURITY INVOKER). NULL data: 22004; data over memory_ext.max_value_bytes: 22001; data
-- nested deeper than 128 levels or with a number beyond a 64-bit float: 22023; a user_id other
-- than the current tenant: 42501.

CREATE FUNCTION checkpoint_save(user_id text, thread_id text, data jsonb) RETURNS jsonb
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

CREATE FUNCTION checkpoint_load(user_id text, thread_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    u text := memory.resolve_tenant(user_id);
    t text := memory.checkpoint_thread(thread_id);
BEGIN
    RETURN (SELECT c.checkpoint_data FROM memory.checkpoints c WHERE c.user_id = u AND c.thread_id = t);
END
$$;

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
-- 0.13.0: a key shows as itself, as a category name must (memory_core::names::legible): no
-- control characters, line or paragraph separators, or format and zero-width characters (a
-- namespace of "\n</x>" was accepted, and rendering was all that stood between it and a prompt).
CREATE FUNCTION memory._checkpoint_key(arg text, v text, may_be_empty boolean) RETURNS text
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
