-- Retrieval records access (the TTL sweep and consolidation read it). $1 user_id, $2 ids.
-- Rows are locked in id order and a row another transaction holds is skipped: two queries
-- touching the same memories in their own rank orders deadlocked (tests/client/tests/memories.rs
-- concurrent_writers_and_readers), and a read should not wait on a write. A skipped row misses
-- one touch; the next retrieval records it.
-- A memory read in the last minute is not written again (its first retrieval always is, however
-- soon after its write): what reads last_accessed_at counts in days (memory_ext.ttl_days), and
-- access_count is a relative measure (consolidation's 90th percentile), so both keep their
-- meaning as "retrievals, at most one a minute". An agent asks its memory again and again
-- within a conversation, and each write cost a retrieval ~1 ms (new row versions, and their
-- index entries when the page is full: the most expensive statement of memory_query in
-- pg_stat_statements at 100k memories, docs/performance.md) and moved the rows the next
-- identical query reads.
UPDATE memory.items i SET last_accessed_at = now(), access_count = i.access_count + 1
FROM (SELECT id FROM memory.items
      WHERE user_id = $1 AND id = ANY($2::uuid[])
        AND (access_count = 0 OR last_accessed_at < now() - interval '1 minute')
      ORDER BY id
      FOR UPDATE SKIP LOCKED) locked
WHERE i.user_id = $1 AND i.id = locked.id
