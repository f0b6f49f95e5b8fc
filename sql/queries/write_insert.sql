-- memory_write: a new memory. $16 is the vector's text form (NULL: none yet, the backfill will
-- embed it); $15 the event time (NULL: now).
INSERT INTO memory.items (user_id, kind, category, text, content, tags, importance, pinned, metadata,
                          agent_id, run_id, actor_id, role, thread_id, happened_at, embedding, embedding_model)
VALUES ($1, $2, $3, $4, $5, coalesce($6, '{}'), $7, $8, coalesce($9, '{}'), $10, $11, $12, $13, $14,
        coalesce($15::timestamptz, now()), $16::{vector}, $17)
RETURNING id::text
