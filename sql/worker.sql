-- The background worker's bookkeeping (src/worker): what each job did last, and when each
-- tenant was last consolidated. Written only by the worker (and memory_worker_run); readable
-- by the extension's owner and superusers (grant memory.worker_status to a monitoring role).

CREATE TABLE memory.worker_jobs (
    job              text PRIMARY KEY CHECK (job IN ('ttl_sweep', 'purge', 'consolidate', 'backfill', 'extract', 'episodes', 'refine', 'summaries')),
    -- memory_worker_run(job): run at the next wake whatever the schedule says. Cleared when a
    -- run that started after the request finishes, so a worker killed mid-run runs it again.
    requested_at     timestamptz,
    -- Runs begun for the pending request; after memory._max_request_attempts() the request
    -- is dropped with an error (a job that kills the worker is not retried forever).
    request_attempts integer NOT NULL DEFAULT 0 CHECK (request_attempts >= 0),
    last_started_at  timestamptz,
    last_finished_at timestamptz,
    last_duration_ms double precision,
    last_counts      jsonb,
    last_error       text,
    last_error_at    timestamptz,
    runs             bigint NOT NULL DEFAULT 0,
    failures         bigint NOT NULL DEFAULT 0
);
-- A job's row appears with its first request or run (no rows ship with the extension: the
-- table is state, dumped and restored whole, see sql/backup.sql).

-- The jobs the worker knows, in the order memory.worker_status lists them.
CREATE FUNCTION memory._worker_job_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ARRAY['backfill', 'consolidate', 'episodes', 'extract', 'purge', 'refine', 'summaries', 'ttl_sweep'] $$;

-- Runs a requested job may begin before the request is dropped.
CREATE FUNCTION memory._max_request_attempts() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 3 $$;

-- One row per tenant the worker has consolidated: its daily slot is due again once last_run_at
-- is older than the slot (memory_core::schedule). A failed run counts as a run (with its error):
-- the tenant is retried at its next slot, not in a loop.
CREATE TABLE memory.consolidation_runs (
    user_id     text        PRIMARY KEY,
    last_run_at timestamptz NOT NULL,
    last_counts jsonb,
    last_error  text
);

-- Each job: whether the worker schedules it (memory_ext.worker_jobs), its last run, and the
-- worker process (NULL when no worker runs: memory_ext not in shared_preload_libraries, or
-- connected to another database, see memory_ext.database).
CREATE VIEW memory.worker_status AS
SELECT n.job,
       n.job = ANY (string_to_array(replace(lower(current_setting('memory_ext.worker_jobs', true)), ' ', ''), ','))
           AS scheduled,
       j.last_started_at, j.last_finished_at, j.last_duration_ms, j.last_counts,
       coalesce(j.runs, 0) AS runs, coalesce(j.failures, 0) AS failures, j.last_error, j.last_error_at, j.requested_at,
       w.pid AS worker_pid, w.datname AS worker_database
FROM unnest(memory._worker_job_names()) AS n(job)
LEFT JOIN memory.worker_jobs j USING (job)
LEFT JOIN LATERAL (SELECT a.pid, a.datname FROM pg_stat_activity a
                   WHERE a.backend_type = 'memory_ext worker' LIMIT 1) w ON true
ORDER BY n.job;

-- memory_worker_run(job) -> timestamptz: asks the worker to run `job` at its next wake
-- (memory_ext.worker_naptime), whether or not it is scheduled or due; `consolidate` then covers
-- every tenant, not only those whose slot has come. Owner and superusers only.
CREATE FUNCTION memory_worker_run(job text) RETURNS timestamptz
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    at timestamptz;
BEGIN
    IF lower(memory_worker_run.job) IS NULL OR NOT lower(memory_worker_run.job) = ANY (memory._worker_job_names()) THEN
        RAISE EXCEPTION 'unknown worker job "%"', job
            USING ERRCODE = '22023', HINT = 'jobs: ttl_sweep, purge, consolidate, backfill, extract, episodes';
    END IF;
    INSERT INTO memory.worker_jobs AS j (job, requested_at) VALUES (lower(memory_worker_run.job), now())
    ON CONFLICT ON CONSTRAINT worker_jobs_pkey DO UPDATE SET requested_at = now(), request_attempts = 0
    RETURNING j.requested_at INTO at;
    RETURN at;
END
$$;
REVOKE ALL ON FUNCTION memory_worker_run(text) FROM PUBLIC;

DO $$
BEGIN
    IF NOT (current_setting('shared_preload_libraries') ~ '(^|[ ,])"?memory_ext"?($|[ ,])') THEN
        RAISE NOTICE 'memory_ext is not in shared_preload_libraries: no background worker will run its jobs'
            USING HINT = 'add it and restart the server, or schedule memory_ttl_sweep(), memory_purge(), '
                         'memory_consolidate() and memory_reembed() with pg_cron';
    END IF;
END
$$;
