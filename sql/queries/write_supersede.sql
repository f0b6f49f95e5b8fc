-- memory_write's "supersedes" (src/ops/write.rs): the older memory ends where its successor
-- happens (never before it began) and links to it; state 'superseded' takes it out of recall.
-- The audit trigger (sql/triggers.sql) records SUPERSEDE in history and 'superseded' in the
-- thread's change log. Returns the id when the memory was active; no row otherwise.
-- $1 user_id, $2 the older memory, $3 its successor.
UPDATE memory.items o
SET state = 'superseded', superseded_by = $3::uuid,
    valid_until = greatest(o.happened_at, n.happened_at), updated_at = now()
FROM memory.items n
WHERE o.user_id = $1 AND o.id = $2::uuid AND o.state = 'active'
  AND n.user_id = $1 AND n.id = $3::uuid
RETURNING o.id::text
