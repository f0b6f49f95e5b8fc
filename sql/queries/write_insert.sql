-- memory_write: a new memory. $16 is the vector's text form (NULL: none yet, the backfill will
-- embed it); $15 the event time (NULL: now); $18 the language (NULL: detected or the tenant's
-- default, sql/triggers.sql memory._set_language).
INSERT INTO memory.items (user_id, kind, category, text, content, tags, importance, pinned, metadata,
                          agent_id, run_id, actor_id, role, thread_id, happened_at, embedding, embedding_model,
                          language)
VALUES ($1, $2, $3, $4, $5, coalesce($6, '{}'), $7, $8, coalesce($9, '{}'), $10, $11, $12, $13, $14,
        coalesce($15::timestamptz, now()), $16::{vector}, $17, $18)
RETURNING id::text
