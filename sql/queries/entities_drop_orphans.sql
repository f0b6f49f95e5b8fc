-- Entities no memory mentions any more are deleted (src/ops/entities.rs `orphans`). $1 user_id
-- or NULL for every tenant the caller sees, $2 only these entity ids (text) or NULL.
DELETE FROM memory.entities e WHERE ($1::text IS NULL OR e.user_id = $1)
AND ($2::text[] IS NULL OR e.id::text = ANY($2))
AND NOT EXISTS (SELECT 1 FROM memory.entity_links l WHERE l.user_id = e.user_id AND l.entity_id = e.id)
