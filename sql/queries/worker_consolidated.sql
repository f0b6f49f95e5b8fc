-- The worker's consolidation job: a tenant's run, its counts (NULL keeps the last ones) and its
-- error. $1 user_id, $2 counts, $3 error or NULL. The clock is read in VALUES only (Citus allows
-- only immutable functions in DO UPDATE SET).
INSERT INTO memory.consolidation_runs AS r (user_id, last_run_at, last_counts, last_error)
VALUES ($1, now(), $2, $3)
ON CONFLICT (user_id) DO UPDATE SET last_run_at = EXCLUDED.last_run_at, last_counts = coalesce(EXCLUDED.last_counts, r.last_counts),
                                    last_error = EXCLUDED.last_error
