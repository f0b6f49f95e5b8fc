-- The delta header's consent line: the tenant's pending proposals ($1 user_id), newest first:
-- how many, and the newest one's category and text. What screening flagged stays out: its text
-- must not reach a prompt before it is approved (src/ops/consent.rs `hold`).
SELECT count(*) OVER (), category, text
FROM memory.proposals
WHERE user_id = $1 AND status = 'pending' AND expires_at > now() AND policy <> 'flag'
ORDER BY created_at DESC
LIMIT 1
