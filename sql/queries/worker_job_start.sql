-- A job run begins ($1 = job). The request (if any) stays until the run finishes
-- (worker_job_finish.sql), so a worker killed mid-run runs it again; each begun run counts
-- against memory._max_request_attempts() (worker_job_interrupted.sql drops it after that).
INSERT INTO memory.worker_jobs AS j (job, last_started_at)
VALUES ($1, now())
ON CONFLICT (job) DO UPDATE
SET last_started_at = now(),
    request_attempts = j.request_attempts + (j.requested_at IS NOT NULL)::int
