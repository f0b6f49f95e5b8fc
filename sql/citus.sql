-- Scale-out on Citus (docs/citus.md). memory_citus_distribute (src/api/citus.rs, the work in
-- src/ops/citus.rs) is the operator's: distributing a table needs its owner, and which
-- tables are sharded is not a tenant's choice.
REVOKE ALL ON FUNCTION memory_citus_distribute() FROM PUBLIC;

-- Gives this transaction's connections to Citus workers the tenant the coordinator acts for, and
-- the planner settings retrieval needs
-- (src/pg/tenant.rs calls it at the start of every API call on Citus). A session's
-- `SET memory_ext.user_id` stays on the coordinator; the workers' row-level security would
-- then see no tenant and return nothing.
-- - Citus sends a `SET LOCAL` on to the workers when citus.propagate_set_commands is 'local'
--   and it runs inside a function (a transaction block for Citus); the caller's value of that
--   setting is put back. The tenant was already checked (memory.current_tenant() rules on it),
--   and it stays the same value on the coordinator.
-- - The planner settings the retrieval statements are written for (src/pg/vector.rs) go along:
--   the HNSW iterative scan (on a worker, without it, a tenant's filter on a shard's HNSW scan
--   can starve the scan of rows) and enable_seqscan = off. On a shard a tenant is most often
--   alone in its partition of memory.items, so its filter selects every row there, and the
--   worker's planner, left to itself, sorted all of the tenant's rows by distance instead of
--   using the HNSW index: at 1M memories (10,000 per tenant) the raw vector statement took
--   19 ms at p50 on memory.items against 2.6 ms on an unpartitioned copy where the tenant
--   shared its shard (docs/citus.md). They last to the end of the transaction on the workers;
--   every statement of a call is a tenant's statement with an index on its tenant, and off
--   still allows a sequential scan where no index applies.
-- - Citus sends it only with the BEGIN of a remote transaction block, and opens one for a read
--   only once the transaction is coordinated (after a write, or a row lock inside a function):
--   the FOR SHARE, which finds no row (thread_id is never null), is that lock, on the tenant's
--   own shard, so every later read of the call carries the tenant too.
-- - No SET clause (search_path): a function's SET clause would undo the SET LOCAL at its exit;
--   it calls only pg_catalog's functions, found first in any search_path that does not name
--   pg_catalog later, and as SECURITY INVOKER a shadowing function would get no more rights.
CREATE FUNCTION memory._tenant_to_workers(tenant text) RETURNS void
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

-- `ts` plus `secs` seconds, as an IMMUTABLE function: the retry times of
-- sql/queries/embed_failure.sql and episodes_end_failed.sql. Citus
-- accepts only immutable functions in ON CONFLICT DO UPDATE SET, and timestamptz + interval is
-- STABLE (a day or a month depends on the time zone). Whole seconds from an absolute instant do
-- not: this adds them through the epoch, with immutable operators only.
CREATE FUNCTION memory._seconds_after(ts timestamptz, secs double precision) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN to_timestamp(extract(epoch FROM ts - timestamptz 'epoch') + secs);

-- On a Citus node, the trigger functions that run statements plan them on every call
-- (plan_cache_mode = force_custom_plan). The tables they write are distributed tables there,
-- run through Citus's local execution, and with a kept generic plan the worker backend that
-- serves the coordinator's connection grew by about 20 kB per statement and never gave it back
-- (Citus 13.2.2: 160 MB after 8,000 single-row inserts into a table whose trigger inserts into a
-- colocated table; nothing without the trigger, or with custom plans; a load of 1M memories
-- ended with that backend OOM-killed at 6.3 GB). On plain Postgres, where kept plans are safe,
-- custom plans cost about a fifth of the bulk write path's time, so only Citus nodes get them:
-- the install script applies them when citus is installed (every worker node has citus before
-- Citus creates memory_ext there), and so does the 0.6.0 -> 0.7.0 upgrade. A node that gained
-- citus after memory_ext gets them from memory_citus_distribute (src/ops/citus.rs), for the
-- coordinator; its workers always create memory_ext after citus.
-- (0.11.0: also memory._erase_copies, which the audit triggers call on every DELETE; 0.12.0:
-- the store's audit trigger, sql/store.sql.)
CREATE FUNCTION memory._citus_trigger_plans() RETURNS void
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
