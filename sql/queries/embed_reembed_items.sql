-- Memories the backfill should embed: no vector, or one of an old model ($2), not given up on and
-- due for a retry. Claimed with SKIP LOCKED so concurrent backfills take different rows.
-- $1 how many, $3 the tenant (one tenant per
-- claim: a row lock across tenants is a statement Citus cannot run, docs/citus.md).
SELECT i.user_id, i.id::text, left(i.text, 8192)
FROM memory.items i
WHERE i.user_id = $3
  AND (i.embedding_model IS NULL OR i.embedding_model = ANY($2::text[]))
  AND i.state = 'active'
  AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures f
                  WHERE f.user_id = i.user_id AND f.target = 'item' AND f.row_id = i.id
                    AND (f.gave_up OR f.next_attempt_at > now()))
LIMIT $1
FOR UPDATE OF i SKIP LOCKED
