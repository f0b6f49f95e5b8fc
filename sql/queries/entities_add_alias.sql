-- An alias added to an entity, once (src/ops/entities.rs `add_alias`). $1 user_id, $2 entity
-- id, $3 the alias.
UPDATE memory.entities SET aliases = array_append(aliases, $3), updated_at = now()
WHERE user_id = $1 AND id = $2::uuid AND NOT ($3 = ANY(aliases))
