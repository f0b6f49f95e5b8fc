-- Memories $3 (text ids) linked to entity $2 (src/ops/entities.rs `split`). $1 user_id.
INSERT INTO memory.entity_links (user_id, entity_id, item_id)
SELECT $1, $2::uuid, i::uuid FROM unnest($3::text[]) i ON CONFLICT DO NOTHING
