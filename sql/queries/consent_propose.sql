-- Consent: a proposal instead of a write ($1 user_id, $2 category, $3 text, $4 the memory_write
-- request, $5 policy, $6 thread_id, $7 days it waits). Returns id, expires_at (formatted
-- outside RETURNING: Citus allows only immutable functions there, docs/citus.md).
WITH p AS (
    INSERT INTO memory.proposals (user_id, category, text, request, policy, thread_id, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(days => $7))
    RETURNING id, expires_at
)
SELECT id::text, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM p
