-- A merge: the links of entity $3 copied to entity $2 (src/ops/entities.rs `merge`). $1 user_id.
INSERT INTO memory.entity_links (user_id, entity_id, item_id)
SELECT user_id, $2::uuid, item_id FROM memory.entity_links
WHERE user_id = $1 AND entity_id = $3::uuid ON CONFLICT DO NOTHING
