-- Retrieval records access (the TTL sweep and consolidation read it). $1 user_id, $2 ids.
-- Rows are locked in id order and a row another transaction holds is skipped: two queries
-- touching the same memories in their own rank orders deadlocked (tests/client/tests/memories.rs
-- concurrent_writers_and_readers), and a read should not wait on a write. A skipped row misses
-- one touch; the next retrieval records it.
UPDATE memory.items i SET last_accessed_at = now(), access_count = i.access_count + 1
FROM (SELECT id FROM memory.items
      WHERE user_id = $1 AND id = ANY($2::uuid[])
      ORDER BY id
      FOR UPDATE SKIP LOCKED) locked
WHERE i.user_id = $1 AND i.id = locked.id
