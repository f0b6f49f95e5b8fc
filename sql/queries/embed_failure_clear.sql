-- Rows that got their vector leave the failure list (src/embed/reembed.rs). $1 user_ids,
-- $2 row ids, $3 target (item, message or file).
DELETE FROM memory.embedding_failures f USING unnest($1::text[], $2::uuid[]) AS v(u, id)
WHERE f.user_id = v.u AND f.target = $3 AND f.row_id = v.id
