-- A memory's relations between entities, as its text states them (src/ops/entities.rs `link`):
-- subject $3[i] is relation $4[i] of object $5[i]. $1 user_id, $2 the memory.
INSERT INTO memory.entity_relations (user_id, subject_id, relation, object_id, item_id)
SELECT $1, s::uuid, r, o::uuid, $2::uuid FROM unnest($3::text[], $4::text[], $5::text[]) AS x(s, r, o)
ON CONFLICT DO NOTHING
