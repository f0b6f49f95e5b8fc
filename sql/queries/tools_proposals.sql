-- memory_proposals as a tool: the tenant's pending proposals a chat may decide (screening's
-- held ones are the application's), oldest first, up to $2: id, category, text, expires_at.
-- $1 user_id, $2 how many.
SELECT id::text, category, text, expires_at
FROM memory.proposals
WHERE user_id = $1 AND status = 'pending' AND expires_at > now() AND policy <> 'flag'
ORDER BY created_at, id
LIMIT $2
