-- memory_forget(id, hard => true): the purge of one memory the same call soft-deleted (or that
-- was soft-deleted before). The audit trigger erases what it said from history and the rest
-- (sql/triggers.sql, memory._erase_copies). $1 id, $2 tenant or NULL (no tenant set: row-level
-- security, or a superuser naming any memory). Returns its owner, id and category (the purge
-- event src/ops/lifecycle.rs records), or no row when there was nothing to purge.
DELETE FROM memory.items
WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2) AND state = 'soft_deleted'
RETURNING user_id, id::text, category
