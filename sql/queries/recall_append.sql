-- message_append: one message; the triggers number it and create its thread (sql/triggers.sql).
-- $9 is the vector's text form or NULL, $11 the session item (session_add_items) or NULL, $12
-- when it was said (NULL: now), $13 its metadata or NULL; the "vector" slot (in braces, never in a comment) is
-- pgvector's schema-qualified type.
INSERT INTO memory.messages (user_id, thread_id, role, content, tool_calls, tool_call_id, name,
                             token_count, embedding, embedding_model, item, created_at, metadata)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::{vector}, $10, $11, coalesce($12, now()), $13)
RETURNING id::text, seq
