-- Memories $3 (text ids) unlinked from entity $2 (src/ops/entities.rs `split`). $1 user_id.
DELETE FROM memory.entity_links WHERE user_id = $1 AND entity_id = $2::uuid
AND item_id::text = ANY($3)
