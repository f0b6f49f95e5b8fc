-- Idempotency (docs/api.md "Idempotency"): the keys of retried writes. A write that carries an
-- idempotency key claims (user_id, key) in its own transaction before it writes anything
-- (src/ops/idempotency.rs): a repeat finds the row and gets `answer`, the first call's answer;
-- a repeat that arrives while the first is still in flight waits on the row's unique index until
-- the first commits (then it is a repeat) or rolls back (then it writes). body_hash is SHA-256
-- of what the call asked for (memory_core::idempotency::body), never the request itself, so a
-- key keeps no copy of what was written. Keys live memory_ext.idempotency_days: a claim deletes
-- its key when older, and memory_purge (the worker's daily purge) deletes every older one.
CREATE TABLE memory.idempotency_keys (
    user_id    text        NOT NULL,
    key        text        NOT NULL,
    op         text        NOT NULL,
    body_hash  bytea       NOT NULL,
    answer     jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created ON memory.idempotency_keys (created_at);
