-- A split: the relations that the moving memories ($4) state about entity $2 go to the new
-- entity $3 (src/ops/entities.rs `split`). $1 user_id.
UPDATE memory.entity_relations
SET subject_id = CASE WHEN subject_id = $2::uuid THEN $3::uuid ELSE subject_id END,
    object_id = CASE WHEN object_id = $2::uuid THEN $3::uuid ELSE object_id END
WHERE user_id = $1 AND item_id = ANY($4::uuid[]) AND (subject_id = $2::uuid OR object_id = $2::uuid)
