-- Bookkeeping that stays complete and bounded: memory files and message edits are in the history
-- (so memory_history and memory_export tell the whole story), and the change log is pruned past
-- memory_ext.change_log_days, after which a delta header says so instead of listing a part.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'keeper';

-- A file's life: written, rewritten, edited, read (not a change), deleted.
SELECT memory_file_write('notes/plan.md', 'Draft one') ->> 'event' AS written;
SELECT memory_file_write('notes/plan.md', 'Draft two') ->> 'event' AS rewritten;
SELECT memory_file_edit('notes/plan.md', 'two', 'three') IS NOT NULL AS edited;
SELECT memory_file_read('notes/plan.md') ->> 'content' AS read;
CREATE TEMP TABLE plan AS SELECT id FROM memory.files WHERE path = 'notes/plan.md';
SELECT memory_file_delete('notes/plan.md') AS deleted;
SELECT h.event, h.old_ref, h.new_ref, h.actor, h.meta ->> 'path' AS path, h.meta ->> 'chars' AS chars
FROM plan p, memory_history(p.id) h;

-- Message edits and deletions (plain SQL, as an application may do them).
SELECT message_append('k-thread', 'user', 'My flight is on Monday') ->> 'seq' AS seq;
UPDATE memory.messages SET content = 'My flight is on Tuesday' WHERE thread_id = 'k-thread';
DELETE FROM memory.messages WHERE thread_id = 'k-thread';
SELECT event, old_ref, new_ref, meta ->> 'seq' AS seq, meta ->> 'thread_id' AS thread
FROM memory.history WHERE entity = 'message' ORDER BY ts;
SELECT count(*) AS message_history_in_export
FROM jsonb_array_elements(memory_export('keeper') -> 'history') h WHERE h ->> 'entity' = 'message';

-- The change log past its horizon.
SELECT memory_write('{"text": "Kim runs on Sundays.", "thread_id": "p-thread"}') ->> 'event' AS first;
SELECT memory_write('{"text": "Kim bought new running shoes.", "thread_id": "p-thread"}') ->> 'event' AS second;
SELECT memory_write('{"text": "Kim signed up for a half marathon.", "thread_id": "p-thread"}') ->> 'event' AS third;
SELECT memory_delta('p-thread', 1) AS header_since_1;
RESET ROLE;
-- Two of the three changes are older than the horizon (30 days by default).
UPDATE memory.change_log SET ts = ts - interval '40 days' WHERE user_id = 'keeper' AND thread_id = 'p-thread' AND rev <= 2;
SET ROLE regress_memory_user;
SELECT memory_purge() AS purged;
SELECT rev, event FROM memory.change_log WHERE thread_id = 'p-thread' ORDER BY rev;
SELECT memory_delta('p-thread', 1) AS header_since_pruned;
SELECT memory_delta('p-thread', 2) AS header_since_kept;
SELECT memory_delta('p-thread', 3) AS header_up_to_date;
-- memory_export_rows: the same content as memory_export, as rows (for tenants of any size).
SELECT memory_ref_store(repeat('a log line' || E'\n', 100), 'a log', thread_id => 'p-thread') ->> 'key' IS NOT NULL AS detail;
SELECT checkpoint_save('keeper', 'p-thread', '{"step": 2}') IS NOT NULL AS checkpoint;
WITH rows AS (SELECT section, jsonb_agg(record ORDER BY ord) AS records
              FROM memory_export_rows('keeper') WITH ORDINALITY AS r(section, record, ord) GROUP BY section),
     doc AS (SELECT memory_export('keeper') AS d)
SELECT k AS section, jsonb_array_length(doc.d -> k) AS in_export,
       coalesce(jsonb_array_length(rows.records), 0) AS as_rows,
       (doc.d -> k) = coalesce(rows.records, '[]'::jsonb) AS same
FROM doc, jsonb_object_keys(doc.d) k LEFT JOIN rows ON rows.section = k
WHERE jsonb_typeof(doc.d -> k) = 'array' ORDER BY k;

-- Access bookkeeping: a retrieval records its memories' access, at most once a minute each (a
-- read within the minute writes nothing: sql/queries/access_record.sql says why).
SELECT memory_write('{"text": "Kim keeps her race bib in a drawer."}') ->> 'event' AS written;
SELECT count(*) AS found FROM jsonb_array_elements(memory_query('{"query": "race bib drawer", "top_k": 1}') -> 'items');
SELECT access_count AS after_first_read FROM memory.items WHERE text LIKE '%race bib%';
SELECT count(*) AS found FROM jsonb_array_elements(memory_query('{"query": "race bib drawer", "top_k": 1}') -> 'items');
SELECT access_count AS within_the_minute, last_accessed_at > now() - interval '1 minute' AS recent
FROM memory.items WHERE text LIKE '%race bib%';
RESET ROLE;
UPDATE memory.items SET last_accessed_at = now() - interval '2 minutes' WHERE text LIKE '%race bib%';
SET ROLE regress_memory_user;
SELECT count(*) AS found FROM jsonb_array_elements(memory_query('{"query": "race bib drawer", "top_k": 1}') -> 'items');
SELECT access_count AS a_minute_later, last_accessed_at > now() - interval '1 minute' AS recent
FROM memory.items WHERE text LIKE '%race bib%';

-- Where the worker serves the database, a read queues its access (memory.access_queue) and the
-- worker counts it (src/ops/access.rs; this database has no worker, so the queue is filled by
-- hand as a read there would). A queued read is a retrieval to the TTL sweep: a memory unread
-- for 61 days by last_accessed_at, but read since, stays; another tenant cannot queue for it.
SELECT memory_write('{"text": "Kim waxes her skis in November.", "importance": 1}') ->> 'event' AS written;
RESET ROLE;
UPDATE memory.items SET last_accessed_at = now() - interval '61 days' WHERE text LIKE '%skis%';
SET ROLE regress_memory_user;
INSERT INTO memory.access_queue (user_id, ids)
SELECT 'keeper', array_agg(id) FROM memory.items WHERE text LIKE '%skis%';
SET memory_ext.user_id = 'someone-else';
INSERT INTO memory.access_queue (user_id, ids) VALUES ('keeper', '{}');
SET memory_ext.user_id = 'keeper';
SELECT memory_ttl_sweep() AS expired_while_queued;
SELECT state FROM memory.items WHERE text LIKE '%skis%';
RESET ROLE;
DELETE FROM memory.access_queue WHERE user_id = 'keeper';
SET ROLE regress_memory_user;
SELECT memory_ttl_sweep() AS expired_with_no_read_queued;
SELECT state FROM memory.items WHERE text LIKE '%skis%';

RESET ROLE;
RESET memory_ext.user_id;
