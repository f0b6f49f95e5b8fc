-- The backfill stores vectors (src/embed/reembed.rs). $1 user_ids, $2 row ids, $3 vectors' text
-- forms, $4 model id. Slots: the table (items, messages or files) and pgvector's
-- schema-qualified vector type, filled in by the caller.
UPDATE memory.{table} t SET embedding = v.e::{vector}, embedding_model = $4
FROM unnest($1::text[], $2::uuid[], $3::text[]) AS v(u, id, e)
WHERE t.user_id = v.u AND t.id = v.id
