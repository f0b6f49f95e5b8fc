-- At worker start: runs that began and never finished were cut short (the worker was killed,
-- the server stopped). Each is a failure on record; a request whose runs keep being cut short is
-- dropped after memory._max_request_attempts() begun runs instead of being retried forever.
UPDATE memory.worker_jobs SET
    failures = failures + 1,
    last_error = CASE WHEN requested_at IS NOT NULL AND request_attempts >= memory._max_request_attempts()
                      THEN format('interrupted: the worker stopped during the run; request dropped after %s attempts', request_attempts)
                      ELSE 'interrupted: the worker stopped during the run' END,
    last_error_at = now(),
    last_finished_at = now(),
    requested_at = CASE WHEN request_attempts >= memory._max_request_attempts() THEN NULL ELSE requested_at END,
    request_attempts = CASE WHEN request_attempts >= memory._max_request_attempts() THEN 0 ELSE request_attempts END
WHERE last_started_at > coalesce(last_finished_at, '-infinity')
RETURNING job
