-- Backups: what pg_dump writes out.
--
-- # Why every table is marked
-- pg_dump leaves out the rows of tables that an extension's script created unless the script
-- marks them with pg_extension_config_dump(): unmarked, every dump of a memory_ext database
-- holds no memory at all (a database of 1,329 memories dumped to 1.7 KB and restored empty).
-- So every table in schema memory is marked, whole: each is user data or state the extension
-- needs back (the model registry, term statistics, the worker's bookkeeping). No table holds
-- rows shipped by this script (the worker's job rows appear on first use, sql/worker.sql), so
-- no filter is needed and a restore never collides with rows CREATE EXTENSION made.
-- memory.items is marked through its partitions: pg_dump writes a partitioned table's rows
-- partition by partition.
--
-- What comes back without being dumped: the per-model HNSW indexes (a trigger on
-- memory.embedding_models rebuilds them as the registry's rows are restored) and the
-- bookkeeping the triggers keep (they recognise a restoring session and leave the restored
-- revisions, history and statistics as they are: memory._restoring(), sql/triggers.sql).
DO $$
DECLARE
    t regclass;
BEGIN
    FOR t IN SELECT c.oid::regclass FROM pg_catalog.pg_class c
             WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind = 'r'
               -- The change feed and its epoch belong to this cluster (sql/changes.sql).
               AND c.relname NOT IN ('changes', 'feed')
             ORDER BY c.relname
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(t, '');
    END LOOP;
END $$;
