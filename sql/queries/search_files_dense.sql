, dense AS (
    -- memory_file_search's vector side (the "dense" slot of sql/queries/search_files.sql).
    SELECT f.id FROM memory.files f
    WHERE f.user_id = $1 AND f.embedding_model = {model} AND ($4::text[] IS NULL OR f.tags && $4)
    ORDER BY f.embedding::{vt} {op} $3::{vt} LIMIT $5
)
