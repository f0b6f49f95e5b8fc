-- memory_summary_define (src/ops/summaries.rs): a tenant's summary, new or redefined. A new
-- question or scope makes the answer stale (the worker writes the next version); the same
-- definition again changes nothing. $1 tenant, $2 name, $3 question, $4 scope. Returns whether
-- the row is new.
INSERT INTO memory.summaries AS s (user_id, name, question, scope, updated_at)
VALUES ($1, $2, $3, $4, now())
ON CONFLICT (user_id, name) DO UPDATE
   SET question = EXCLUDED.question, scope = EXCLUDED.scope, stale = true,
       stale_since = coalesce(s.stale_since, EXCLUDED.updated_at), retry_at = NULL, attempts = 0,
       updated_at = EXCLUDED.updated_at
 WHERE (s.question, s.scope) IS DISTINCT FROM (EXCLUDED.question, EXCLUDED.scope)
RETURNING (xmax = 0)
