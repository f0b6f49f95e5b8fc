-- memory_ext 0.8.0 -> 0.9.0 (ALTER EXTENSION memory_ext UPDATE TO '0.9.0')
--
-- The surfaces agents touch (docs/api.md "Agent tools", "Consent", "Limits", "Sessions"):
-- - memory.events gains `sqlstate`: a tool call's error is told to the model in words, and the
--   SQLSTATE it came from is kept here.
-- - checkpoint_save refuses what no reader could read back (new memory.check_json).
-- - session_get_items / session_pop_item / session_clear take `user_id` as session_add_items
--   does; session_get_items' limit 0 is none, negative is all.
-- - memory.run_ends is the worker's: tenants read it; run_end writes it as the owner.
-- - Stored categories are normalised as 0.9.0 writes them (below).
-- Everything else is in the library (tool calls, consent, rendering, limits, the worker's
-- fairness, preloading).
--
-- On Citus, run ALTER EXTENSION on the coordinator: Citus runs it on every node.
-- IF NOT EXISTS: on Citus the coordinator sends this ALTER on to every node, where the script
-- runs as well (whichever comes second finds the column there).
ALTER TABLE memory.events ADD COLUMN IF NOT EXISTS sqlstate text;

-- The queue of ended runs is the worker's: a tenant enqueues only through run_end (which writes
-- it as the owner) and reads its own rows; it can no longer set its own retry times.
REVOKE INSERT, UPDATE, DELETE ON memory.run_ends FROM PUBLIC;

-- Categories as 0.9.0 writes them (crates/memory_core/src/names.rs `category`): compatibility-
-- composed (NFKC), lower case, every run of whitespace, '-' and '_' one '_', none at either end.
-- Reads compare what a request names, normalised, with what is stored, so stored categories
-- are normalised too: "Travel Plans" written on 0.8.0 is found as "travel plans" (or
-- "travel_plans") on 0.9.0. A name that would become empty is left as it is. The configured
-- categories (two that become one keep the first), their allowlists, pending proposals, and
-- the memories: their category only, not a change of the memory (no new updated_at, no history
-- row, no revision: the triggers for those are off for that one statement; the BM25 statistics
-- follow the new category as for any update).
--
-- On Citus the script runs on every node, and a worker may not run statements on distributed
-- tables from inside it: the rows are changed from the coordinator, the memories' categories by
-- the statement docs/citus.md "Upgrade a cluster" gives (ALTER TABLE ... DISABLE TRIGGER is not
-- one an extension script can send across a cluster).
DO $$
DECLARE
    citus boolean := EXISTS (SELECT FROM pg_extension WHERE extname = 'citus');
    here  boolean := true;
BEGIN
    IF citus THEN
        EXECUTE 'SELECT citus_is_coordinator()' INTO here;
    END IF;
    IF NOT here THEN
        RETURN;
    END IF;
    INSERT INTO memory.categories (user_id, name, context, rag_length, custom)
    SELECT DISTINCT ON (user_id, key) user_id, key, context, rag_length, custom
    FROM (SELECT c.*, nullif(btrim(regexp_replace(lower(normalize(c.name, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '') AS key
          FROM memory.categories c) x
    WHERE key IS NOT NULL AND key <> name
    ORDER BY user_id, key, name
    ON CONFLICT DO NOTHING;
    INSERT INTO memory.allowlists (user_id, agent, category)
    SELECT user_id, agent, key
    FROM (SELECT l.*, nullif(btrim(regexp_replace(lower(normalize(l.category, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '') AS key
          FROM memory.allowlists l) x
    WHERE key IS NOT NULL AND key <> category
    ON CONFLICT DO NOTHING;
    -- (Their old allowlist rows go with them: ON DELETE CASCADE.)
    DELETE FROM memory.categories c
    WHERE nullif(btrim(regexp_replace(lower(normalize(c.name, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '') <> c.name;
    UPDATE memory.proposals p
    SET category = nullif(btrim(regexp_replace(lower(normalize(p.category, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '')
    WHERE p.status = 'pending'
      AND nullif(btrim(regexp_replace(lower(normalize(p.category, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '') <> p.category;
    IF citus THEN
        RAISE NOTICE 'memory_ext 0.9.0: memories'' categories were not normalised on this Citus cluster'
            USING HINT = 'docs/citus.md "Upgrade a cluster" gives the statement to run on the coordinator';
        RETURN;
    END IF;
    ALTER TABLE memory.items DISABLE TRIGGER items_touch;
    ALTER TABLE memory.items DISABLE TRIGGER items_audit_update;
    UPDATE memory.items i
    SET category = nullif(btrim(regexp_replace(lower(normalize(i.category, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '')
    WHERE nullif(btrim(regexp_replace(lower(normalize(i.category, NFKC)), '[[:space:]_-]+', '_', 'g'), '_'), '') <> i.category;
    ALTER TABLE memory.items ENABLE TRIGGER items_touch;
    ALTER TABLE memory.items ENABLE TRIGGER items_audit_update;
END $$;

-- JSON that no reader could read back (nested deeper than 128 levels, a number beyond a 64-bit
-- float) is refused by checkpoint_save (sql/checkpoints.sql).
CREATE FUNCTION memory."check_json"(
	"arg" TEXT, /* & str */
	"value" jsonb /* Option < JsonText > */
) RETURNS void
IMMUTABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'check_json_wrapper';

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

-- Sessions name their tenant as session_add_items does (src/api/session.rs).
DROP FUNCTION session_get_items(text, integer);
DROP FUNCTION session_pop_item(text);
DROP FUNCTION session_clear(text);
CREATE  FUNCTION "session_clear"(
	"session_id" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS bigint /* i64 */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_clear_wrapper';
CREATE  FUNCTION "session_get_items"(
	"session_id" TEXT, /* Option < & str > */
	"limit" INT DEFAULT NULL, /* Option < i32 > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_get_items_wrapper';
CREATE  FUNCTION "session_pop_item"(
	"session_id" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* Option < JsonB > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_pop_item_wrapper';
