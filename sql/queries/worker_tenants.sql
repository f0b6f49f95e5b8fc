-- The worker's consolidation job: tenants with memories and when each was last consolidated.
SELECT c.user_id, extract(epoch FROM r.last_run_at)::float8
FROM memory.corpus c LEFT JOIN memory.consolidation_runs r USING (user_id)
WHERE c.docs > 0 ORDER BY c.user_id
