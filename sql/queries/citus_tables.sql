-- memory_citus_distribute (src/ops/citus.rs): the extension's tables that hold tenants' rows
-- (every table of schema memory with a user_id column, partitions aside) that Citus does not
-- distribute yet, in an order it accepts: memory.items first (the others are colocated with
-- it), then each table after every table its foreign keys reference. Read from the catalog, so a
-- table added in a later release is distributed without changing this list.
WITH RECURSIVE tenant_tables AS (
    SELECT c.oid, c.relname::text AS name
    FROM pg_class c
    WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      -- Grants (sql/spaces.sql) are keyed by member but looked up by the row policies on every
      -- node: a reference table (sql/queries/citus_reference.sql).
      AND c.relname <> 'grants'
      AND EXISTS (SELECT 1 FROM pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attname = 'user_id' AND NOT a.attisdropped)
), refs AS (
    SELECT DISTINCT f.conrelid AS child, f.confrelid AS parent
    FROM pg_constraint f
    WHERE f.contype = 'f' AND f.conparentid = 0 AND f.conrelid <> f.confrelid
      AND f.conrelid IN (SELECT oid FROM tenant_tables)
), depth (oid, level) AS (
    SELECT oid, 0 FROM tenant_tables
    UNION ALL
    SELECT r.child, d.level + 1 FROM depth d JOIN refs r ON r.parent = d.oid
)
SELECT 'memory.' || quote_ident(t.name)
FROM tenant_tables t JOIN depth d USING (oid)
WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = t.oid)
GROUP BY t.name
ORDER BY max(d.level), t.name <> 'items', t.name
