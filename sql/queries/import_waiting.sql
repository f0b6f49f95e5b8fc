-- How many of a tenant's rows have no vector yet, by kind (memory_import's notes,
-- src/ops/import.rs). $1 user_id.
SELECT jsonb_build_object(
    'memories', (SELECT count(*) FROM memory.items WHERE user_id = $1 AND embedding IS NULL),
    'messages', (SELECT count(*) FROM memory.messages WHERE user_id = $1 AND embedding IS NULL),
    'files', (SELECT count(*) FROM memory.files WHERE user_id = $1 AND embedding IS NULL),
    'store texts', (SELECT count(*) FROM memory.store_vectors WHERE user_id = $1 AND embedding IS NULL))
