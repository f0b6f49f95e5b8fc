-- Operational events (docs/design.md "Operational events"): written where the data exists, counted by the view,
-- scoped to the tenant.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'evan';
SELECT memory_write('{"text": "Evan drinks green tea every morning.", "category": "preferences", "thread_id": "e1"}') ->> 'event' AS w1;
SELECT memory_write('{"text": "Evan drinks green tea every morning.", "thread_id": "e1"}') ->> 'event' AS w2;
SELECT jsonb_array_length(memory_query('{"query": "what does Evan drink?", "thread_id": "e1"}')->'items') AS hits;
SELECT memory_forget((SELECT id FROM memory.items WHERE user_id = 'evan' LIMIT 1)) ->> 'state' AS state;
SELECT memory_ref_store('log', 'a log') ->> 'key' AS key;
SELECT memory_file_write('n.md', 'note') ->> 'event' AS file;
SELECT node, op, status, thread_id, memory_id IS NOT NULL AS has_memory, category, sim IS NOT NULL AS has_sim
FROM memory.events ORDER BY ts, op;
SELECT node, op, status, events FROM memory.event_counts ORDER BY node, op, status;
-- Another tenant sees no counts of evan's.
SET memory_ext.user_id = 'evan-other';
SELECT count(*) AS visible FROM memory.event_counts;
-- Only a superuser turns tracking off.
SET memory_ext.track_events = off;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- Off: nothing recorded (superuser-only setting).
SET memory_ext.track_events = off;
SET memory_ext.user_id = 'evan';
SELECT memory_file_write('m.md', 'note') ->> 'event' AS file;
SELECT count(*) AS events FROM memory.events WHERE user_id = 'evan';
RESET memory_ext.track_events;
-- The jobs record theirs: a memory unused for 100 days expires (ttl), then is purged (purge).
SELECT memory_write('{"text": "Evan once tried oolong tea.", "importance": 1}') ->> 'event' AS w3;
UPDATE memory.items SET last_accessed_at = now() - interval '100 days' WHERE user_id = 'evan' AND text LIKE 'Evan once%';
SELECT memory_ttl_sweep() AS expired;
UPDATE memory.items SET purge_at = now() - interval '1 day' WHERE user_id = 'evan' AND state = 'soft_deleted';
SELECT memory_purge() AS purged;
SELECT node, op, count(*) FROM memory.events WHERE user_id = 'evan' AND node = 'worker' GROUP BY 1, 2 ORDER BY 1, 2;
