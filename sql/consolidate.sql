-- Consolidation's bookkeeping (docs/design.md "Consolidation"; src/ops/consolidate.rs): pair
-- fingerprints, per-tenant daily usage, and which memories were examined. The other lifecycle
-- steps, TTL and purge, need no tables of their own (items.state / purge_at, history).

-- A checked pair, so that it is not checked again for 14 days at the same score
-- (consolidate.rs FINGERPRINT_DAYS). id_a < id_b. Rows older than that are dead weight: the
-- purge job removes them.
CREATE TABLE memory.consolidation_fingerprints (
    user_id    text         NOT NULL,
    id_a       uuid         NOT NULL,
    id_b       uuid         NOT NULL,
    score      numeric(3,2) NOT NULL,
    verdict    text         NOT NULL CHECK (verdict IN ('same', 'different')),
    checked_at timestamptz  NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id_a, id_b, score),
    CHECK (id_a < id_b)
);

-- Pairs checked and LLM prompts sent per tenant per day: the caps of docs/design.md "Consolidation".
CREATE TABLE memory.consolidation_usage (
    user_id   text    NOT NULL,
    day       date    NOT NULL DEFAULT current_date,
    pairs     integer NOT NULL DEFAULT 0 CHECK (pairs >= 0),
    llm_calls integer NOT NULL DEFAULT 0 CHECK (llm_calls >= 0),
    PRIMARY KEY (user_id, day)
);

-- When consolidation last took each memory as a candidate. A run takes the memories not examined
-- since they last changed first (then the newest), so a tenant whose candidates outnumber one
-- run's pool is covered over successive runs instead of the newest ones being re-read every
-- day. Rows older than 14 days go with the purge (a memory is then examined again).
CREATE TABLE memory.consolidation_seen (
    user_id text        NOT NULL,
    id      uuid        NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id)
);
