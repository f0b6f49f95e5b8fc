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
--   job 'episodes' (episodes and compaction after a run, off the application's call, and the
--   weekly project roll-ups; memory_rollup runs those now).
-- - Consent (docs/api.md "Consent"): new table memory.proposals; memory_write reads "source";
--   new functions memory_proposals, memory_approve, memory_reject; memory_purge marks expired
--   proposals; memory_export lists proposals (both functions are replaced).
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

-- Consent (0.6.0, docs/api.md "Consent"): a change to a sensitive field (a memory of a category
-- in memory_ext.consent_categories) that was inferred, not stated (extraction, or memory_write
-- with "source": "inferred"), waits here for memory_approve / memory_reject instead of being
-- written; it expires after 7 days. A benign field (memory_ext.corroborate_categories) is written
-- once a second signal with the same text corroborates it. `request` is the memory_write request
-- applied on approval; the row stays after the decision (status, decided_at, decided_by: the
-- audit of the decision). Written by the extension as its owner; tenants read their own rows.
CREATE TABLE memory.proposals (
    user_id    text        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    category   text        NOT NULL,
    text       text        NOT NULL,
    request    jsonb       NOT NULL CHECK (jsonb_typeof(request) = 'object'),
    policy     text        NOT NULL CHECK (policy IN ('consent', 'corroborate')),
    signals    integer     NOT NULL DEFAULT 1 CHECK (signals >= 1),
    status     text        NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'applied')),
    thread_id  text,
    memory_id  uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL DEFAULT now() + interval '7 days',
    decided_at timestamptz,
    decided_by text,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX proposals_pending_idx ON memory.proposals (user_id, category) WHERE status = 'pending';

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['extractions', 'extraction_usage', 'run_ends', 'proposals']
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
GRANT SELECT ON memory.extractions, memory.extraction_usage, memory.proposals TO PUBLIC;
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

CREATE  FUNCTION "memory_approve"(
	"id" uuid /* Option < pgrx :: Uuid > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_approve_wrapper';

CREATE  FUNCTION "memory_reject"(
	"id" uuid /* Option < pgrx :: Uuid > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_reject_wrapper';

CREATE  FUNCTION "memory_rollup"(
	"project" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_rollup_wrapper';

-------------------------------------------------------------------------------- consent (sql/consent.sql)
-- memory_proposals(user_id) -> table: the tenant's consent proposals (docs/api.md "Consent"),
-- newest first; a pending one past its expiry shows as 'expired' (memory_purge records it so).
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
CREATE FUNCTION memory_proposals(user_id text DEFAULT NULL)
RETURNS TABLE (id uuid, category text, text text, policy text, signals integer, status text,
               thread_id text, memory_id uuid, created_at timestamptz, expires_at timestamptz,
               decided_at timestamptz, decided_by text)
LANGUAGE sql STABLE
AS $$
    SELECT p.id, p.category, p.text, p.policy, p.signals,
           CASE WHEN p.status = 'pending' AND p.expires_at <= now() THEN 'expired' ELSE p.status END,
           p.thread_id, p.memory_id, p.created_at, p.expires_at, p.decided_at, p.decided_by
    FROM memory.proposals p
    WHERE p.user_id = memory.resolve_tenant(memory_proposals.user_id)
    ORDER BY p.created_at DESC, p.id
$$;

-------------------------------------------------------------------------------- export (sql/audit.sql: proposals)
-- memory_export_rows(user_id) -> table (section text, record jsonb): memory_export as a stream of
-- rows, one per stored row, in the same sections and order. memory_export builds one jsonb
-- document, which Postgres caps at 256 MB of JSON (54000 beyond); this has no such cap: a
-- driver reads it with a cursor, psql with \copy, and a tenant of any size can be exported.
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
CREATE OR REPLACE FUNCTION memory_export_rows(user_id text DEFAULT NULL)
RETURNS TABLE (section text, record jsonb)
LANGUAGE sql STABLE
AS $$
    WITH u AS (SELECT memory.resolve_tenant(user_id) AS id)
    SELECT s, r FROM (
        SELECT 1 AS o, 'agents' AS s, to_jsonb(a) - 'user_id' AS r, row_number() OVER (ORDER BY a.agent_id) AS n
        FROM memory.agents a, u WHERE a.user_id = u.id
        UNION ALL
        SELECT 2, 'blocks', to_jsonb(b) - 'user_id', row_number() OVER (ORDER BY b.agent_id, b.label)
        FROM memory.blocks b, u WHERE b.user_id = u.id
        UNION ALL
        SELECT 3, 'threads', to_jsonb(t) - 'user_id', row_number() OVER (ORDER BY t.thread_id)
        FROM memory.threads t, u WHERE t.user_id = u.id
        UNION ALL
        SELECT 4, 'messages', to_jsonb(m) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY m.thread_id, m.seq)
        FROM memory.messages m, u WHERE m.user_id = u.id
        UNION ALL
        SELECT 5, 'memories', to_jsonb(i) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY i.created_at, i.id)
        FROM memory.items i, u WHERE i.user_id = u.id
        UNION ALL
        SELECT 6, 'relations', to_jsonb(r) - 'user_id', row_number() OVER (ORDER BY r.created_at, r.id)
        FROM memory.relations r, u WHERE r.user_id = u.id
        UNION ALL
        SELECT 7, 'history', to_jsonb(h) - 'user_id', row_number() OVER (ORDER BY h.ts, h.id)
        FROM memory.history h, u WHERE h.user_id = u.id
        UNION ALL
        SELECT 8, 'categories', to_jsonb(c) - 'user_id', row_number() OVER (ORDER BY c.name)
        FROM memory.categories c, u WHERE c.user_id = u.id
        UNION ALL
        SELECT 9, 'allowlists', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.agent, l.category)
        FROM memory.allowlists l, u WHERE l.user_id = u.id
        UNION ALL
        SELECT 10, 'checkpoints', to_jsonb(k) - 'user_id', row_number() OVER (ORDER BY k.thread_id)
        FROM memory.checkpoints k, u WHERE k.user_id = u.id
        UNION ALL
        SELECT 11, 'details', to_jsonb(d) - 'user_id'
                              || jsonb_build_object('content', (SELECT coalesce(string_agg(c.content, '' ORDER BY c.n), '')
                                                                FROM memory.detail_chunks c
                                                                WHERE c.user_id = d.user_id AND c.key = d.key)),
               row_number() OVER (ORDER BY d.key)
        FROM memory.details d, u WHERE d.user_id = u.id
        UNION ALL
        SELECT 12, 'files', to_jsonb(f) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY f.path)
        FROM memory.files f, u WHERE f.user_id = u.id
        UNION ALL
        SELECT 13, 'events', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.ts, e.id)
        FROM memory.events e, u WHERE e.user_id = u.id
        UNION ALL
        SELECT 14, 'proposals', to_jsonb(p) - 'user_id', row_number() OVER (ORDER BY p.created_at, p.id)
        FROM memory.proposals p, u WHERE p.user_id = u.id
    ) x
    ORDER BY o, n
$$;
