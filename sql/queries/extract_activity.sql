-- The theory-of-mind pass (src/ops/extract.rs; its "latest activity items"): the
-- tenant's newest active memories of what was said and done, newest first. $1 user_id,
-- $2 how many.
SELECT text FROM memory.items
WHERE user_id = $1 AND state = 'active' AND kind IN ('semantic', 'episodic', 'archival')
ORDER BY created_at DESC, id
LIMIT $2
