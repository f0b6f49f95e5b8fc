, dense AS (
    -- memory_query's vector side (the "dense" slot of sql/queries/search_memories_seed.sql):
    -- the active model's partial HNSW index, under the seed statement's filters.
    SELECT i.id, i.user_id FROM memory.items i
    WHERE i.user_id {owner} AND {state} AND i.embedding_model = {model} {filters}
    ORDER BY i.embedding::{vt} {op} $2::{vt}
    LIMIT $8
)
