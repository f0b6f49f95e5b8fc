-- The backfill stores vectors (src/embed/reembed.rs), one tenant's rows of one table at a time
-- (on Citus a statement routed to that tenant's shard). $1 user_id, $2 row ids, $3 vectors'
-- text forms, $4 model id. Slots: the table (items, messages, files or store_vectors) and
-- pgvector's schema-qualified vector type, filled in by the caller.
UPDATE memory.{table} t SET embedding = v.e::{vector}, embedding_model = $4
FROM unnest($2::uuid[], $3::text[]) AS v(id, e)
WHERE t.user_id = $1 AND t.id = v.id
