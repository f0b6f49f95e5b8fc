-- Memory files the backfill should embed: no vector, or one of an old model ($2), not given up
-- on and due for a retry. The body is the title and the start of the content, as on write
-- (src/ops/files.rs). Claimed with SKIP LOCKED. $1 how many, $3 the tenant (one tenant per
-- claim: a row lock across tenants is a statement Citus cannot run, docs/citus.md).
SELECT f.user_id, f.id::text, coalesce(f.title || E'\n', '') || left(f.content, 4000)
FROM memory.files f
WHERE f.user_id = $3
  AND (f.embedding_model IS NULL OR f.embedding_model = ANY($2::text[]))
  AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures x
                  WHERE x.user_id = f.user_id AND x.target = 'file' AND x.row_id = f.id
                    AND (x.gave_up OR x.next_attempt_at > now()))
LIMIT $1
FOR UPDATE OF f SKIP LOCKED
