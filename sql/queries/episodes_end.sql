-- run_end: records that the thread's run ended, for the worker (sql/schema.sql memory.run_ends).
-- A second end before the worker got to the first replaces it. $1 user_id, $2 thread_id,
-- $3 run_id, $4 context_window. The clock is read in VALUES and the answer formatted outside
-- RETURNING: Citus allows only immutable functions in DO UPDATE SET and RETURNING.
WITH r AS (
    INSERT INTO memory.run_ends AS r (user_id, thread_id, run_id, context_window, requested_at, retry_at)
    VALUES ($1, $2, $3, $4, now(), now())
    ON CONFLICT (user_id, thread_id) DO UPDATE
    SET run_id = EXCLUDED.run_id, context_window = EXCLUDED.context_window,
        requested_at = EXCLUDED.requested_at, attempts = 0, retry_at = EXCLUDED.retry_at,
        last_error = NULL
    RETURNING r.requested_at
)
SELECT to_char(requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM r
