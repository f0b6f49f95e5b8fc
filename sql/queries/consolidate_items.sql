-- The active memories of consolidation's pairs, with what decides which one survives a merge.
-- $1 user_id, $2 ids.
SELECT id::text, text, pinned, importance, extract(epoch FROM updated_at)::float8, access_count
FROM memory.items WHERE user_id = $1 AND id = ANY($2::uuid[]) AND state = 'active'
