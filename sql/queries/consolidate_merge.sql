-- Merges a same-fact pair (docs/design.md "Consolidation"): the survivor ($2) takes the higher importance, either
-- pin and both tag sets; the loser ($3) is soft-deleted (a MERGE event naming the survivor:
-- the caller sets the hints), and its relation edges move to the survivor (no self-loops, no
-- duplicates). memory_restore of the loser undoes the merge. $1 user_id, $4 days to purge.
WITH l AS (
    SELECT importance, pinned, tags FROM memory.items WHERE user_id = $1 AND id = $3::uuid
), s AS (
    UPDATE memory.items s SET importance = greatest(s.importance, l.importance), pinned = s.pinned OR l.pinned,
           tags = ARRAY(SELECT DISTINCT t FROM unnest(s.tags || l.tags) t ORDER BY t)
    FROM l WHERE s.user_id = $1 AND s.id = $2::uuid
    RETURNING s.id
), gone AS (
    UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + make_interval(days => $4)
    WHERE user_id = $1 AND id = $3::uuid AND state = 'active'
    RETURNING id
), moved_from AS (
    INSERT INTO memory.relations (user_id, from_id, to_id, relation_type, strength)
    SELECT user_id, $2::uuid, to_id, relation_type, strength FROM memory.relations
    WHERE user_id = $1 AND from_id = $3::uuid AND to_id <> $2::uuid
    ON CONFLICT DO NOTHING
    RETURNING 1
), moved_to AS (
    INSERT INTO memory.relations (user_id, from_id, to_id, relation_type, strength)
    SELECT user_id, from_id, $2::uuid, relation_type, strength FROM memory.relations
    WHERE user_id = $1 AND to_id = $3::uuid AND from_id <> $2::uuid
    ON CONFLICT DO NOTHING
    RETURNING 1
), dropped AS (
    DELETE FROM memory.relations WHERE user_id = $1 AND (from_id = $3::uuid OR to_id = $3::uuid)
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone) = 1
