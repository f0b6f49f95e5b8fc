-- A one-node install's rows, written on the Citus coordinator before memory_citus_distribute()
-- (scripts/test.sh, layer citus): distributing must carry them into the shards, and
-- tests/python/test_citus.py (test_rows_written_before_distributing_move_into_the_shards)
-- reads them back through the coordinator afterwards.
\set ON_ERROR_STOP 1
SET memory_ext.user_id = 'citus-before';
SELECT memory_agent('before-agent', 'citus-before', persona => 'I am Sage.', human => 'Name: Ana') IS NOT NULL;
SELECT block_append('before-agent', 'human', 'Lives in Lisbon') IS NOT NULL;
SELECT message_append('before-thread', 'user', 'Can you help me plan a trip to Porto?') IS NOT NULL;
SELECT message_append('before-thread', 'assistant', 'Of course. When would you like to go?') IS NOT NULL;
SELECT memory_write('{"text": "Ana prefers green tea over coffee.", "category": "preferences", "thread_id": "before-thread"}') ->> 'event';
SELECT memory_write('{"text": "The trip to Porto is planned for May.", "category": "tasks", "thread_id": "before-thread"}') ->> 'event';
SELECT memory_file_write('notes/porto.md', 'Porto in May: book the train.') IS NOT NULL;
SELECT checkpoint_save('citus-before', 'before-thread', '{"step": 3}'::jsonb) IS NOT NULL;
