-- The background worker's bookkeeping (src/worker): what each job did last, and when each
-- tenant was last consolidated. Written only by the worker (and memory_worker_run); readable
-- by the extension's owner and superusers (grant memory.worker_status to a monitoring role).

CREATE TABLE memory.worker_jobs (
    job              text PRIMARY KEY CHECK (job IN ('ttl_sweep', 'purge', 'consolidate', 'backfill')),
    -- memory_worker_run(job): run at the next wake whatever the schedule says.
    requested_at     timestamptz,
    last_started_at  timestamptz,
    last_finished_at timestamptz,
    last_duration_ms double precision,
    last_counts      jsonb,
    last_error       text,
    last_error_at    timestamptz,
    runs             bigint NOT NULL DEFAULT 0,
    failures         bigint NOT NULL DEFAULT 0
);
INSERT INTO memory.worker_jobs (job) VALUES ('ttl_sweep'), ('purge'), ('consolidate'), ('backfill');

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
SELECT j.job,
       j.job = ANY (string_to_array(replace(lower(current_setting('memory_ext.worker_jobs', true)), ' ', ''), ','))
           AS scheduled,
       j.last_started_at, j.last_finished_at, j.last_duration_ms, j.last_counts,
       j.runs, j.failures, j.last_error, j.last_error_at, j.requested_at,
       w.pid AS worker_pid, w.datname AS worker_database
FROM memory.worker_jobs j
LEFT JOIN LATERAL (SELECT a.pid, a.datname FROM pg_stat_activity a
                   WHERE a.backend_type = 'memory_ext worker' LIMIT 1) w ON true
ORDER BY j.job;

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
    UPDATE memory.worker_jobs j SET requested_at = now()
    WHERE j.job = lower(memory_worker_run.job)
    RETURNING j.requested_at INTO at;
    IF at IS NULL THEN
        RAISE EXCEPTION 'unknown worker job "%"', job
            USING ERRCODE = '22023', HINT = 'jobs: ttl_sweep, purge, consolidate, backfill';
    END IF;
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
