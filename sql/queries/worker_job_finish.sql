-- A job run ended ($1 job, $2 duration ms, $3 counts or NULL, $4 error or NULL, $5 whether the
-- run also sets last_started_at: the backfill records only runs that did something). A request
-- made before this run began is answered by it; one made during the run stays for the next.
INSERT INTO memory.worker_jobs AS j (job, last_started_at, last_finished_at, last_duration_ms, last_counts,
                                     last_error, last_error_at, runs, failures)
VALUES ($1, now() - make_interval(secs => $2 / 1000), now(), $2, $3,
        $4, CASE WHEN $4 IS NOT NULL THEN now() END, 1, ($4 IS NOT NULL)::int)
ON CONFLICT (job) DO UPDATE SET
    last_started_at = CASE WHEN $5 THEN EXCLUDED.last_started_at ELSE j.last_started_at END,
    last_finished_at = now(), last_duration_ms = $2, runs = j.runs + 1,
    last_counts = coalesce($3, j.last_counts),
    last_error = coalesce($4, j.last_error),
    last_error_at = CASE WHEN $4 IS NULL THEN j.last_error_at ELSE now() END,
    failures = j.failures + ($4 IS NOT NULL)::int,
    requested_at = CASE WHEN j.requested_at <= j.last_started_at THEN NULL ELSE j.requested_at END,
    request_attempts = CASE WHEN j.requested_at <= j.last_started_at THEN 0 ELSE j.request_attempts END
