-- Erasure (docs/operations.md "Privacy"): memory_erase_tenant removes everything a tenant has
-- from every table of schema memory and leaves a receipt. The tables are found in the catalog
-- (every table with a user_id column), so a table added later is erased without a change here.

-- What erasures happened: the tenant only as a SHA-256 of its id, who erased it, when, why and
-- how many rows of each table went; never content. It survives the erasure it records, is
-- readable by the extension's owner only, is in pg_dump's output (the record must outlive a
-- restore: sql/backup.sql marks it, as every table) and in no tenant's export.
CREATE TABLE memory.erasures (
    id          uuid        NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
    tenant_hash text        NOT NULL,
    erased_at   timestamptz NOT NULL DEFAULT now(),
    erased_by   text        NOT NULL,
    reason      text        NOT NULL,
    rows        jsonb       NOT NULL CHECK (jsonb_typeof(rows) = 'object')
);
REVOKE ALL ON memory.erasures FROM PUBLIC;

-- The tenant tables, in the order the erasure deletes from them: the audit trail and the
-- change log first, so that the triggers that fire on the other tables' rows
-- (memory._erase_copies) find nothing left to scrub, then the rest by name.
CREATE FUNCTION memory._tenant_tables() RETURNS SETOF regclass
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT c.oid::regclass
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id' AND NOT a.attisdropped
    WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY c.relname NOT IN ('history', 'change_log', 'events'), c.relname
$$;
REVOKE ALL ON FUNCTION memory._tenant_tables() FROM PUBLIC;

-- The erasure itself, run as the owner by memory_erase_tenant (src/ops/erase.rs), which
-- decides who may call it. One transaction: all of it happens or none. Deleting rows fires the
-- tables' triggers, which write history, change-log and statistics rows of the tenant again;
-- each pass deletes what the previous one left, until a pass finds nothing.
CREATE FUNCTION memory._erase_tenant(p_user text, p_reason text) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t      regclass;
    n      bigint;
    found  bigint;
    counts jsonb := '{}';
    pass   integer := 0;
    r      memory.erasures;
BEGIN
    FOR t IN SELECT * FROM memory._tenant_tables() LOOP
        EXECUTE format('SELECT count(*) FROM %s WHERE user_id = $1', t) INTO n USING p_user;
        IF n > 0 THEN
            counts := counts || jsonb_build_object(replace(t::text, 'memory.', ''), n);
        END IF;
    END LOOP;
    LOOP
        pass := pass + 1;
        found := 0;
        FOR t IN SELECT * FROM memory._tenant_tables() LOOP
            EXECUTE format('DELETE FROM %s WHERE user_id = $1', t) USING p_user;
            GET DIAGNOSTICS n = ROW_COUNT;
            found := found + n;
        END LOOP;
        EXIT WHEN found = 0;
        IF pass >= 5 THEN
            RAISE EXCEPTION 'erasing a tenant: rows keep appearing after % passes', pass
                USING ERRCODE = '55000';
        END IF;
    END LOOP;
    INSERT INTO memory.erasures (tenant_hash, erased_by, reason, rows)
    VALUES (encode(sha256(convert_to(p_user, 'UTF8')), 'hex'), memory._invoker(), p_reason, counts)
    RETURNING * INTO r;
    RETURN jsonb_build_object('id', r.id, 'tenant_hash', r.tenant_hash, 'erased_at', r.erased_at,
                              'erased_by', r.erased_by, 'reason', r.reason, 'rows', r.rows,
                              'total', (SELECT coalesce(sum(v::bigint), 0) FROM jsonb_each_text(counts) x(k, v)));
END $$;
REVOKE ALL ON FUNCTION memory._erase_tenant(text, text) FROM PUBLIC;
