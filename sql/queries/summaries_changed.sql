-- Summaries to compare with their scope (src/ops/summaries.rs `check`): fresh ones whose tenant
-- changed a memory since they were last compared, or whose evidence is no longer as it was.
-- $1 how many. Returns tenant and name.
SELECT s.user_id, s.name
FROM memory.summaries s
WHERE NOT s.stale AND NOT s.disabled
  AND (EXISTS (SELECT 1 FROM memory.items i
               WHERE i.user_id = s.user_id AND i.updated_at > coalesce(s.checked_at, s.refreshed_at))
       OR (SELECT count(*) FROM memory.items i
           WHERE i.user_id = s.user_id AND i.id = ANY (s.evidence) AND i.state = 'active') < cardinality(s.evidence))
ORDER BY s.checked_at NULLS FIRST, s.user_id, s.name
LIMIT $1
