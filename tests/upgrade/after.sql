-- The API on a database upgraded from the previous release, over the data it wrote
-- (tests/upgrade/data.sql): old rows are found, and new writes carry on where they left off.
\set ON_ERROR_STOP on
SET memory_ext.user_id = 'upgrade-user';
-- Old memories are found, by meaning and by keyword.
SELECT EXISTS (SELECT 1 FROM jsonb_array_elements(memory_query('{"query": "What does Ana drink?", "top_k": 3}') -> 'items') i
               WHERE i ->> 'text' LIKE '%Ana prefers green tea%') AS old_memory_found;
SELECT count(*) > 0 AS keyword_found FROM memory_search('Porto');
-- New messages continue the old thread's numbering; its revision keeps counting.
SELECT (message_append('up-thread', 'user', 'Is May a good month?') ->> 'seq')::int = 4 AS seq_continues;
SELECT memory_write('{"text": "Ana wants a hotel near the river.", "thread_id": "up-thread"}') ->> 'event' AS new_write;
SELECT block_replace('up-agent', 'human', 'Ana', 'Ana Silva') ->> 'label' AS block_edit;
SELECT compile_core_blocks('up-agent') LIKE '%Ana Silva%' AS compiled;
SELECT (checkpoint_load('upgrade-user', 'up-thread') ->> 'step')::int AS checkpoint_step;
SELECT left(memory_ref_get((SELECT key FROM memory.details LIMIT 1), "offset" => 0, "limit" => 8) ->> 'content', 8) AS detail_page;
SELECT (memory_file_read('projects/porto.md') ->> 'content') LIKE '%900 EUR%' AS file_read;
SELECT count(*) >= 1 AS history_kept FROM memory_history((SELECT id FROM memory.items WHERE text LIKE 'The trip%'));
SELECT jsonb_typeof(memory_export('upgrade-user')) AS export;
SELECT job IS NOT NULL AS worker_run_requested FROM (SELECT memory_worker_run('purge') AS job) r;
-- 0.5.0: an old memory superseded by a new one leaves recall, stays in history and as_of.
SELECT memory_write(jsonb_build_object('text', 'Ana now prefers black coffee.', 'supersedes',
         (SELECT id FROM memory.items WHERE text LIKE 'Ana prefers green tea%' AND state = 'active' LIMIT 1))) ->> 'superseded' IS NOT NULL AS superseded;
SELECT NOT EXISTS (SELECT 1 FROM jsonb_array_elements(memory_query('{"query": "What does Ana drink?", "top_k": 5}') -> 'items') i
                   WHERE i ->> 'text' LIKE '%green tea%') AS superseded_left_recall;
SELECT EXISTS (SELECT 1 FROM memory_history((SELECT id FROM memory.items WHERE text LIKE 'Ana prefers green tea%' LIMIT 1)) h
               WHERE h.event = 'SUPERSEDE') AS supersede_in_history;
-- 0.6.0: extraction starts at the upgrade (the old turns are not read), then extracts what is
-- said from now on; run_end only records the request.
SELECT (memory_extract('up-thread') ->> 'created')::int = 0 AS old_turns_not_extracted;
SELECT message_append('up-thread', 'user', 'Please remember that Ana is vegetarian.') IS NOT NULL AS appended;
SELECT (memory_extract('up-thread') ->> 'created')::int = 1 AS new_turn_extracted;
SELECT EXISTS (SELECT 1 FROM memory.items WHERE text = 'Ana is vegetarian.' AND metadata ->> 'source' = 'extraction') AS extracted_fact;
SELECT run_end('up-thread') ->> 'requested_at' IS NOT NULL AS run_end_queued;
-- 0.6.0: consent on the upgraded database.
SELECT memory_write('{"text": "Ana lives in Lisbon.", "category": "city", "source": "inferred"}') ->> 'event' = 'proposed' AS proposed;
SELECT memory_approve((SELECT id FROM memory_proposals() WHERE status = 'pending' LIMIT 1)) ->> 'status' = 'approved' AS approved;
SELECT jsonb_array_length(memory_export('upgrade-user') -> 'proposals') = 1 AS proposals_exported;
