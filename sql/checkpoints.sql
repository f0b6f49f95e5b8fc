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
