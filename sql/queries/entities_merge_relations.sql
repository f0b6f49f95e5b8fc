-- A merge: the relations of entity $3 copied to entity $2, on either side (src/ops/entities.rs
-- `merge`; deleting $3 then deletes the originals). A relation that would relate $2 to itself
-- ("Bob is Robert's brother", Bob merged into Robert) is dropped. $1 user_id.
INSERT INTO memory.entity_relations (user_id, subject_id, relation, object_id, item_id)
SELECT user_id, s, relation, o, item_id
FROM (SELECT user_id, relation, item_id,
             CASE WHEN subject_id = $3::uuid THEN $2::uuid ELSE subject_id END AS s,
             CASE WHEN object_id = $3::uuid THEN $2::uuid ELSE object_id END AS o
      FROM memory.entity_relations
      WHERE user_id = $1 AND (subject_id = $3::uuid OR object_id = $3::uuid)) r
WHERE s <> o
ON CONFLICT DO NOTHING
