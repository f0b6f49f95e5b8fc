-- The delta header's consent line: the tenant's pending proposals ($1 user_id), newest first:
-- how many, and the newest one's category and text.
SELECT count(*) OVER (), category, text
FROM memory.proposals
WHERE user_id = $1 AND status = 'pending' AND expires_at > now()
ORDER BY created_at DESC
LIMIT 1
