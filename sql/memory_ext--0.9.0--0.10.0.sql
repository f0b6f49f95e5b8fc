-- memory_ext 0.9.0 -> 0.10.0 (ALTER EXTENSION memory_ext UPDATE TO '0.10.0')
--
-- PostgreSQL 17 and 18 (docs/operations.md "PostgreSQL versions"). The schema's one change:
-- memory.tenant_tsvector gets a standard SQL body, so that Postgres records that it calls
-- memory.tenant_lexeme. pg_dump --binary-upgrade orders objects by recorded dependencies only; with
-- the string body it created tenant_tsvector's callers before tenant_lexeme, and pg_upgrade of a
-- database with memory_ext failed. Run this update on the old server before pg_upgrade.
-- The function's result is the same: no stored tsvector changes.
CREATE OR REPLACE FUNCTION memory.tenant_tsvector(user_id text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT memory.tenant_lexeme(user_id)::tsvector;
END;

-- The view's description names the repository's own document, as a fresh install's does.
COMMENT ON VIEW memory.event_counts IS
    'memory_ext: operational events per tenant, hour, node, op and status (docs/design.md, Operational events)';
