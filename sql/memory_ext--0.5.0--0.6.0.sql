-- memory_ext 0.5.0 -> 0.6.0 (ALTER EXTENSION memory_ext UPDATE TO '0.6.0')
--
-- What changes: memory that forms and keeps itself current in the background.
-- - Extraction (docs/design.md "Extraction"): new tables memory.extractions (each thread's
--   watermark and retry state) and memory.extraction_usage (per tenant and day: writes against
--   the daily cap, LLM calls and tokens); new function memory_extract(thread_id); worker job
--   'extract'. Every thread that exists at upgrade time starts at its last message: extraction
--   covers what is said from now on, not the history (set a thread's extracted_seq to 0 to have
--   its history read).
-- - Ended runs (docs/api.md "Episodes"): new table memory.run_ends and function run_end; worker
--   job 'episodes' (episodes and compaction after a run, off the application's call).
-- - memory.worker_jobs accepts the two new jobs; memory._worker_job_names and
--   memory_worker_run list them.
-- No stored row is rewritten. The fresh-install script of 0.6.0 and this upgrade give the same
-- schema: tests/upgrade checks it, catalog by catalog.

\echo Use "ALTER EXTENSION memory_ext UPDATE TO '0.6.0'" to load this file. \quit

-------------------------------------------------------------------------------- tables
-- Extraction (0.6.0, docs/design.md "Extraction"): how far the background worker has read each
-- thread. Every message up to extracted_seq has been through extraction, and the watermark moves
-- in the transaction that writes what was extracted, so a worker killed mid-batch repeats the
-- batch instead of losing or doubling it. attempts / retry_at / last_error: a failing thread's
-- bounded retries (the others go on meanwhile). A thread without a row starts from its first
-- message. Written by the extension as its owner; tenants read their own rows.
CREATE TABLE memory.extractions (
    user_id       text        NOT NULL,
    thread_id     text        NOT NULL,
    extracted_seq bigint      NOT NULL DEFAULT 0 CHECK (extracted_seq >= 0),
    attempts      integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at      timestamptz,
    last_error    text,
    last_run_at   timestamptz,
    PRIMARY KEY (user_id, thread_id),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);

-- Per tenant and day: memories extraction wrote (memory_ext.extract_daily_cap bounds them) and
-- what its LLM calls cost. Written by the extension as its owner: a tenant cannot reset its cap.
CREATE TABLE memory.extraction_usage (
    user_id    text    NOT NULL,
    day        date    NOT NULL,
    writes     integer NOT NULL DEFAULT 0 CHECK (writes >= 0),
    calls      integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    tokens_in  bigint  NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out bigint  NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    PRIMARY KEY (user_id, day)
);

-- Ended runs waiting for the worker (0.6.0, docs/api.md "Episodes"): run_end only records the
-- request here; the worker writes the episode and compacts when the context is full, then
-- deletes the row. One pending end per thread: a second run_end before the worker gets to it
-- updates the first (its episode covers both).
CREATE TABLE memory.run_ends (
    user_id        text        NOT NULL,
    thread_id      text        NOT NULL,
    run_id         text        CHECK (run_id <> ''),
    context_window integer     CHECK (context_window > 0),
    requested_at   timestamptz NOT NULL DEFAULT now(),
    attempts       integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at       timestamptz NOT NULL DEFAULT now(),
    last_error     text,
    PRIMARY KEY (user_id, thread_id),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);
CREATE INDEX run_ends_retry_idx ON memory.run_ends (retry_at);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['extractions', 'extraction_usage', 'run_ends']
    LOOP
        EXECUTE format('ALTER TABLE memory.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON memory.%I
                            USING (user_id = memory.current_tenant())
                            WITH CHECK (user_id = memory.current_tenant())', t);
        -- In pg_dump's output, as every table of schema memory (sql/backup.sql).
        PERFORM pg_catalog.pg_extension_config_dump(format('memory.%I', t)::regclass, '');
    END LOOP;
END $$;
GRANT SELECT ON memory.extractions, memory.extraction_usage TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.run_ends TO PUBLIC;

-- Threads that exist now: extraction starts at their last message.
INSERT INTO memory.extractions (user_id, thread_id, extracted_seq)
SELECT user_id, thread_id, last_seq FROM memory.threads
ON CONFLICT (user_id, thread_id) DO NOTHING;

-------------------------------------------------------------------------------- worker
ALTER TABLE memory.worker_jobs DROP CONSTRAINT worker_jobs_job_check,
    ADD CONSTRAINT worker_jobs_job_check CHECK (job IN ('ttl_sweep', 'purge', 'consolidate', 'backfill', 'extract', 'episodes'));
CREATE OR REPLACE FUNCTION memory._worker_job_names() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ARRAY['backfill', 'consolidate', 'episodes', 'extract', 'purge', 'ttl_sweep'] $$;
CREATE OR REPLACE FUNCTION memory_worker_run(job text) RETURNS timestamptz
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

-------------------------------------------------------------------------------- functions
CREATE  FUNCTION "memory_extract"(
	"thread_id" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_extract_wrapper';

CREATE  FUNCTION "run_end"(
	"thread_id" TEXT, /* Option < & str > */
	"run_id" TEXT DEFAULT NULL, /* Option < & str > */
	"context_window" INT DEFAULT NULL /* Option < i32 > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'run_end_wrapper';
