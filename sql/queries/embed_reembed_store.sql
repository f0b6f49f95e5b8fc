-- Store texts the backfill should embed: no vector yet, or one of an old model ($2) (a vector
-- the caller computed, model 'client', is the caller's and is never replaced), not given up on
-- and due for a retry. Claimed with SKIP LOCKED. $1 how many, $3 the tenant (one tenant per
-- claim, as embed_reembed_files.sql).
SELECT v.user_id, v.id::text, v.text
FROM memory.store_vectors v
WHERE v.user_id = $3
  AND (v.embedding_model IS NULL OR v.embedding_model = ANY($2::text[]))
  AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures x
                  WHERE x.user_id = v.user_id AND x.target = 'store' AND x.row_id = v.id
                    AND (x.gave_up OR x.next_attempt_at > now()))
LIMIT $1
FOR UPDATE OF v SKIP LOCKED
