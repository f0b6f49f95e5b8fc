-- Of memories $3, those linked to any of entities $2 (src/ops/entities.rs). $1 user_id.
SELECT DISTINCT item_id::text FROM memory.entity_links
WHERE user_id = $1 AND entity_id = ANY($2::uuid[]) AND item_id = ANY($3::uuid[])
