-- An alias taken from entity $2 (src/ops/entities.rs `split`). $1 user_id, $3 the alias.
UPDATE memory.entities SET aliases = array_remove(aliases, $3), updated_at = now()
WHERE user_id = $1 AND id = $2::uuid
