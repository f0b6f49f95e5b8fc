-- memory_restore: back to what it was, purge_at cleared (also undoes a merge: the loser returns).
-- A memory forgotten after it was superseded returns superseded, not active: its successor
-- still stands (docs/api.md "Supersede").
-- $1 id, $2 tenant or NULL.
UPDATE memory.items
SET state = CASE WHEN superseded_by IS NULL THEN 'active' ELSE 'superseded' END, purge_at = NULL
WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2) AND state = 'soft_deleted'
RETURNING jsonb_build_object('id', id, 'state', state, 'purge_at', purge_at, 'event', 'restored')
