-- A detail's Layer-1 memory: its placeholder as a memory of kind 'detail' ($8: the agent it was
-- stored for, or NULL). $6 is the vector's
-- text form or NULL; the "vector" slot (in braces, never in a comment) is pgvector's
-- schema-qualified type.
INSERT INTO memory.items (user_id, kind, text, key, thread_id, metadata, embedding, embedding_model, agent_id)
VALUES ($1, 'detail', $2, $3, $4, $5, $6::{vector}, $7, $8) RETURNING id::text
