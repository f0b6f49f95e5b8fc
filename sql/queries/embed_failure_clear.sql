-- Rows that got their vector leave the failure list (src/embed/reembed.rs), one tenant at a
-- time like embed_store.sql. $1 user_id, $2 row ids, $3 target (item, message, file or store).
DELETE FROM memory.embedding_failures f
WHERE f.user_id = $1 AND f.target = $3 AND f.row_id = ANY($2::uuid[])
