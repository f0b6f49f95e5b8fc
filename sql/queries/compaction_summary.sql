-- compact_thread: the summary message at the head of the context, with what it covers in its
-- metadata ($6: {"summary": {...}}). $4 is the vector's text form or NULL; the "vector" slot
-- (in braces, never in a comment) is pgvector's schema-qualified type.
INSERT INTO memory.messages (user_id, thread_id, role, content, is_summary, embedding, embedding_model, metadata)
VALUES ($1, $2, 'system', $3, true, $4::{vector}, $5, $6) RETURNING id::text
