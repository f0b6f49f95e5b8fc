-- memory_restore: back to what it was, purge_at cleared (also undoes a merge: the loser returns).
-- A memory forgotten after it was superseded returns superseded, not active: its successor
-- still stands (docs/api.md "Supersede").
-- $1 id, $2 tenant or NULL. The answer, then user_id, thread_id, category (as forget's); the
-- answer is built outside RETURNING (Citus allows only immutable functions there).
WITH back AS (
    UPDATE memory.items
    SET state = CASE WHEN superseded_by IS NULL THEN 'active' ELSE 'superseded' END, purge_at = NULL
    WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2) AND state = 'soft_deleted'
    RETURNING user_id, id, state, purge_at, thread_id, category
)
SELECT jsonb_build_object('id', id, 'state', state, 'purge_at', purge_at, 'event', 'restored'),
       user_id, thread_id, category
FROM back
