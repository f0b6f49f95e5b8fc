-- The worker's episodes: ending the run failed ($3 the error). Retried after $4 seconds times 4
-- per earlier failure (1, 4, 16, 64 min with $4 = 60); after
-- $5 attempts the row stays with its error and no retry (retry_at infinity) until the next
-- run_end. An idle run that failed gets a row here too, so its retries are bounded the same way.
-- $1 user_id, $2 thread_id.
-- The clock is read in VALUES (EXCLUDED.requested_at: now; a new row's request time) and the
-- retry time computed with memory._seconds_after: Citus allows only immutable functions in
-- DO UPDATE SET (docs/citus.md).
INSERT INTO memory.run_ends AS r (user_id, thread_id, attempts, requested_at, retry_at, last_error)
VALUES ($1, $2, 1, now(), now() + make_interval(secs => $4), $3)
ON CONFLICT (user_id, thread_id) DO UPDATE
SET attempts = r.attempts + 1, last_error = $3,
    retry_at = CASE WHEN r.attempts + 1 >= $5 THEN 'infinity'::timestamptz
                    ELSE memory._seconds_after(EXCLUDED.requested_at, $4 * power(4, least(r.attempts, 6))) END
