-- run_end: records that the thread's run ended, for the worker (sql/schema.sql memory.run_ends).
-- A second end before the worker got to the first replaces it. $1 user_id, $2 thread_id,
-- $3 run_id, $4 context_window.
INSERT INTO memory.run_ends AS r (user_id, thread_id, run_id, context_window)
VALUES ($1, $2, $3, $4)
ON CONFLICT (user_id, thread_id) DO UPDATE
SET run_id = EXCLUDED.run_id, context_window = EXCLUDED.context_window, requested_at = now(),
    attempts = 0, retry_at = now(), last_error = NULL
RETURNING to_char(r.requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
