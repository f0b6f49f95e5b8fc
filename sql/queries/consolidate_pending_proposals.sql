-- memory_consolidate's paraphrase check: the tenant's pending corroborate proposals that have
-- not expired, oldest first: id, category, text. $1 user_id.
SELECT id::text, category, text
FROM memory.proposals
WHERE user_id = $1 AND status = 'pending' AND policy = 'corroborate' AND expires_at > now()
ORDER BY created_at, id
LIMIT 100
