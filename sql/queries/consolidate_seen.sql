-- Consolidation marks its candidates examined, so that the next runs take others first.
-- $1 user_id, $2 ids.
INSERT INTO memory.consolidation_seen AS s (user_id, id)
SELECT $1, unnest($2::uuid[])
ON CONFLICT (user_id, id) DO UPDATE SET seen_at = now()
