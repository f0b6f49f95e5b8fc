-- Summaries with an answer, for a prompt or an agent's tool (src/ops/summaries.rs `readable`):
-- name, question, answer, the day it was written and whether it is stale (as
-- sql/queries/summaries_read.sql tells). $1 tenant, $2 names (NULL: all), $3 the categories the
-- reader may read (NULL: any): a summary resting on a memory of another category (or of none)
-- is left out.
SELECT s.name, s.question, s.answer, to_char(s.refreshed_at, 'YYYY-MM-DD'),
       s.stale OR (SELECT count(*) FROM memory.items i
                   WHERE i.user_id = $1 AND i.id = ANY (s.evidence) AND i.state = 'active'
                     AND i.updated_at <= s.refreshed_at) < cardinality(s.evidence)
FROM memory.summaries s
WHERE s.user_id = $1 AND NOT s.disabled AND s.answer IS NOT NULL
  AND ($2::text[] IS NULL OR s.name = ANY ($2))
  AND ($3::text[] IS NULL OR NOT EXISTS (
        SELECT 1 FROM memory.items i
        WHERE i.user_id = $1 AND i.id = ANY (s.evidence)
          AND (i.category IS NULL OR NOT i.category = ANY ($3))))
ORDER BY s.name
