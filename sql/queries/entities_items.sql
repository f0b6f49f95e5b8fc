-- The memories linked to entity $2, with their text (src/ops/entities.rs `split`). $1 user_id.
SELECT i.id::text, i.text FROM memory.entity_links l
JOIN memory.items i ON i.user_id = l.user_id AND i.id = l.item_id
WHERE l.user_id = $1 AND l.entity_id = $2::uuid
