-- Summaries the worker keeps (0.13.0, docs/api.md "Summaries"): a question about a tenant's
-- memories whose answer the worker keeps current (src/ops/summaries.rs), read by
-- memory_summary_get with no model at query time. Built-in ones (`profile`, `entity:<name>`,
-- `project:<name>`) are defined by the worker; the tenant defines the others.

-- One row per summary: its definition, its current answer and what that answer rests on.
-- `evidence` the memories the answer used; `fingerprint` the memories it could have used
-- (sql/queries/summaries_evidence.sql) when it was written, so that the worker sees the scope
-- change; `stale` set when either changed and cleared by the next version.
CREATE TABLE memory.summaries (
    user_id      text        NOT NULL,
    name         text        NOT NULL CHECK (name <> '' AND length(name) <= 110),
    question     text        NOT NULL CHECK (question <> '' AND length(question) <= 500),
    scope        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(scope) = 'object'),
    builtin      boolean     NOT NULL DEFAULT false,
    -- A built-in summary the tenant dropped: the worker does not define it again.
    disabled     boolean     NOT NULL DEFAULT false,
    answer       text,
    evidence     uuid[]      NOT NULL DEFAULT '{}',
    fingerprint  text,
    method       text        CHECK (method IN ('llm', 'extractive')),
    version      integer     NOT NULL DEFAULT 0 CHECK (version >= 0),
    stale        boolean     NOT NULL DEFAULT true,
    stale_since  timestamptz DEFAULT now(),
    refreshed_at timestamptz,
    -- When the worker last compared the scope with the fingerprint.
    checked_at   timestamptz,
    attempts     integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at     timestamptz,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, name)
);
-- The worker's queue: stale summaries, by when they may be tried.
CREATE INDEX summaries_stale_idx ON memory.summaries (retry_at) WHERE stale AND NOT disabled;
-- Which summaries rest on a memory (a purge scrubs them, sql/triggers.sql memory._erase_copies).
CREATE INDEX summaries_evidence_idx ON memory.summaries USING gin (evidence);

-- Every version a summary had: its answer and evidence. A purge of a memory it rested on
-- clears the answer (`erased`): the version stays, what it said goes.
CREATE TABLE memory.summary_versions (
    user_id    text        NOT NULL,
    name       text        NOT NULL,
    version    integer     NOT NULL CHECK (version >= 1),
    question   text        NOT NULL,
    answer     text,
    evidence   uuid[]      NOT NULL DEFAULT '{}',
    method     text        NOT NULL CHECK (method IN ('llm', 'extractive')),
    tokens_in  integer     NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out integer     NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    erased     boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, name, version),
    FOREIGN KEY (user_id, name) REFERENCES memory.summaries ON DELETE CASCADE
);
CREATE INDEX summary_versions_evidence_idx ON memory.summary_versions USING gin (evidence);

-- Per tenant and day: the model's tokens spent on summaries (memory_ext.summary_daily_tokens
-- bounds them). Written by the worker as the extension's owner.
CREATE TABLE memory.summary_usage (
    user_id    text    NOT NULL,
    day        date    NOT NULL,
    calls      integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    tokens_in  bigint  NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out bigint  NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    PRIMARY KEY (user_id, day)
);
