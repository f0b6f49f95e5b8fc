-- Every kind of row a user has, written through the API: the data of the backup round trip
-- (tests/python/test_backup.py) and of the upgrade test, which runs it with the library of the
-- release being upgraded from (tests/upgrade/run.sh). Only functions every release has.
\set ON_ERROR_STOP on
SET memory_ext.user_id = 'upgrade-user';
SELECT memory_agent('up-agent', 'upgrade-user', persona => 'I am Sage.', human => 'Name: Ana') IS NOT NULL;
SELECT block_append('up-agent', 'human', 'Lives in Lisbon') IS NOT NULL;
SELECT block_set('up-agent', 'project', 'Building memory_ext', 'What we work on.', 500) IS NOT NULL;
SELECT message_append('up-thread', 'user', 'Hi! Can you help me plan a trip to Porto?') IS NOT NULL;
SELECT message_append('up-thread', 'assistant', 'Of course. When would you like to go?') IS NOT NULL;
SELECT memory_configure('{"categories": [{"name": "preferences"}, {"name": "tasks"}], "allowlists": {"up-agent": ["preferences", "tasks"]}}') IS NOT NULL;
SELECT memory_write('{"text": "Ana prefers green tea over coffee.", "category": "preferences", "importance": 3, "thread_id": "up-thread"}') IS NOT NULL;
SELECT memory_write('{"text": "The trip to Porto is planned for May.", "category": "tasks", "thread_id": "up-thread"}') IS NOT NULL;
SELECT memory_write('{"text": "Ana is allergic to peanuts.", "importance": 5, "pinned": true}') IS NOT NULL;
SELECT memory_write('{"text": "Ana prefers green tea over coffee!"}') IS NOT NULL;
SELECT memory_forget((SELECT id FROM memory.items WHERE text LIKE 'The trip%')) IS NOT NULL;
SELECT memory_restore((SELECT id FROM memory.items WHERE text LIKE 'The trip%')) IS NOT NULL;
SELECT memory_query('{"query": "What does Ana drink?", "thread_id": "up-thread", "top_k": 2}') IS NOT NULL;
SELECT checkpoint_save('upgrade-user', 'up-thread', '{"step": 3}') IS NOT NULL;
SELECT memory_ref_store(repeat('log line' || E'\n', 200), 'a long log', 'command_output', thread_id => 'up-thread') IS NOT NULL;
SELECT memory_file_write('projects/porto.md', E'# Porto trip\nMay, 4 nights, budget 900 EUR.', tags => ARRAY['travel']) IS NOT NULL;
SELECT compact_thread('up-thread', keep_last => 1) IS NOT NULL;
SELECT memory_consolidate('upgrade-user') IS NOT NULL;
