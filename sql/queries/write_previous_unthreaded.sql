-- memory_write: a memory written without a thread follows the tenant's last thread-less memory
-- when the two happened within an hour of each other (one sitting: a caller that logs a
-- conversation's turns without thread ids still gets its episodes; rank.rs lends scores along
-- them only between conversational memories). $1 user_id, $2 the new memory's event time
-- (text, NULL = now).
SELECT p.id::text
FROM (SELECT id, happened_at FROM memory.items
      WHERE user_id = $1 AND thread_id IS NULL AND state = 'active'
      ORDER BY created_at DESC, id DESC LIMIT 1) p
WHERE abs(extract(epoch FROM p.happened_at - coalesce($2::timestamptz, now()))) <= 3600
