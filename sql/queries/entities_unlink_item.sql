-- A memory's links to entities it no longer names go (src/ops/entities.rs `link`). $1 user_id,
-- $2 the memory, $3 the entities it names now (text ids). Returns the entities unlinked.
DELETE FROM memory.entity_links WHERE user_id = $1 AND item_id = $2::uuid
AND NOT (entity_id::text = ANY($3)) RETURNING entity_id::text
