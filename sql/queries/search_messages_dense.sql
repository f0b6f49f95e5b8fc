, dense AS (
    -- conversation_search's vector side (the "dense" slot of sql/queries/search_messages.sql).
    SELECT m.id FROM memory.messages m
    WHERE m.user_id {owner} AND {thread} AND m.embedding_model = {model}
      AND ($5::text[] IS NULL OR m.role = ANY($5)) AND ($6::timestamptz IS NULL OR m.created_at >= $6)
      AND ($7::timestamptz IS NULL OR m.created_at < $7)
    ORDER BY m.embedding::{vt} {op} $4::{vt}
    LIMIT $8
)
