-- A row's embedding failed (again). $1 user_id, $2 target, $3 row id, $4 model, $5 error,
-- $6 base retry delay in seconds, $7 attempts before giving up. The first retry is due at once
-- (the failed attempt was the write's own); later ones back off: $6, 2x$6, 4x$6 ... up to 1 h.
-- The clock is read in VALUES and the retry time computed with memory._seconds_after: Citus
-- allows only immutable functions in DO UPDATE SET (docs/citus.md).
INSERT INTO memory.embedding_failures AS f (user_id, target, row_id, model_id, last_error, last_attempt_at, next_attempt_at, gave_up)
VALUES ($1, $2, $3::uuid, $4, $5, now(), now(), $7 <= 1)
ON CONFLICT (user_id, target, row_id) DO UPDATE
SET attempts        = f.attempts + 1,
    model_id        = EXCLUDED.model_id,
    last_error      = EXCLUDED.last_error,
    last_attempt_at = EXCLUDED.last_attempt_at,
    next_attempt_at = memory._seconds_after(EXCLUDED.last_attempt_at, least(3600, $6 * power(2, f.attempts))),
    gave_up         = f.attempts + 1 >= $7
