-- A memory linked to the entities it names (src/ops/entities.rs `link`). $1 user_id, $2 the
-- memory, $3 entity ids (text).
INSERT INTO memory.entity_links (user_id, entity_id, item_id)
SELECT $1, e::uuid, $2::uuid FROM unnest($3::text[]) e ON CONFLICT DO NOTHING
