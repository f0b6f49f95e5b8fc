-- The background worker's place in a Citus cluster (src/worker/jobs.rs, docs/citus.md):
-- 'worker' on a worker node (the coordinator's worker runs the jobs); 'undistributed' on a
-- coordinator whose memory tables are still its own (until memory_citus_distribute() has run:
-- a job then would race the distribution for the same tables); else 'coordinator'.
SELECT CASE
    WHEN NOT citus_is_coordinator() THEN 'worker'
    WHEN to_regclass('memory.items') IS NOT NULL
         AND NOT EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = to_regclass('memory.items'))
        THEN 'undistributed'
    ELSE 'coordinator'
END
