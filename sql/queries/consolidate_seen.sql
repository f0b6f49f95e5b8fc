-- Consolidation marks its candidates examined, so that the next runs take others first.
-- $1 user_id, $2 ids. The clock is read in the SELECT: Citus allows only immutable functions in
-- DO UPDATE SET.
INSERT INTO memory.consolidation_seen AS s (user_id, id, seen_at)
SELECT $1, unnest($2::uuid[]), now()
ON CONFLICT (user_id, id) DO UPDATE SET seen_at = EXCLUDED.seen_at
