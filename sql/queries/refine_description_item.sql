-- The Layer-1 memory of a refined description (src/ops/detail.rs `refine`): its placeholder
-- line, found by memory_ref_search, and its embedding. $1 user_id, $2 item id, $3 the line,
-- $4 the vector's text form or NULL, $5 its model. The "vector" slot (in braces, never in a
-- comment) is pgvector's schema-qualified type.
UPDATE memory.items SET text = $3, embedding = $4::{vector}, embedding_model = $5
WHERE user_id = $1 AND id = $2::uuid
