-- Checkpoints (docs/design.md "Checkpoints"): save replaces the thread's state, load returns it, tenants never
-- see each other's, bad arguments fail with their SQLSTATE and change nothing.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'cp-user';
SELECT checkpoint_load('cp-user', 't1') IS NULL AS none_yet;
SELECT s->>'thread_id' AS thread, (s->>'created_at') = (s->>'updated_at') AS first_save
FROM checkpoint_save('cp-user', 't1', '{"step": 1, "state": {"messages": ["hi"]}}') s;
SELECT checkpoint_load('cp-user', 't1');
-- A second save replaces the state (one row per thread).
BEGIN;
SELECT (checkpoint_save('cp-user', 't1', '{"step": 2}')->>'thread_id') AS thread;
COMMIT;
SELECT checkpoint_load('cp-user', 't1');
SELECT count(*) AS rows, bool_and(updated_at >= created_at) AS ordered FROM memory.checkpoints;
-- Threads are separate; the tenant may be left implicit.
SELECT checkpoint_save(NULL, 't2', '[1, 2, 3]') IS NOT NULL AS saved;
SELECT checkpoint_load(NULL, 't2');
-- Another tenant sees nothing of these, and may not act for cp-user.
SET memory_ext.user_id = 'cp-other';
SELECT checkpoint_load(NULL, 't1') IS NULL AS invisible;
SELECT checkpoint_load('cp-user', 't1');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_save('cp-user', 't1', '{}');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.user_id = 'cp-user';
-- Bad input: NULL data 22004; thread NULL 22004, empty or over 200 characters 22023.
SELECT checkpoint_save('cp-user', 't1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_save('cp-user', NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_save('cp-user', ' ', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_load('cp-user', repeat('x', 201));
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_load('cp-user', 't1');
RESET ROLE;
-- LangGraph's checkpointer (0.12.0): a history per thread and namespace, parents, blobs stored
-- once per channel version, pending writes in LangGraph's order, metadata filters, delete,
-- copy, prune. Run as an ordinary role under row-level security.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'cp-user';
SELECT checkpoint_put('g1', '', 'c1', NULL, '{"v": 4, "id": "c1", "channel_versions": {"a": "1", "b": "1"}, "channel_values": {"n": 1}}',
                      '{"source": "input", "step": -1, "run_id": "r1"}', '{a,b}', '{1,1}', '{json,bytes}', ARRAY['\x01'::bytea, '\x02']);
SELECT checkpoint_put('g1', '', 'c2', 'c1', '{"v": 4, "id": "c2", "channel_versions": {"a": "2", "b": "1"}, "channel_values": {}}',
                      '{"source": "loop", "step": 0, "run_id": "r2"}', '{a}', '{2}', '{json}', ARRAY['\x03'::bytea]);
SELECT checkpoint_put('g1', 'child', 'c3', NULL, '{"v": 4, "id": "c3", "channel_versions": {}, "channel_values": {}}', '{"run_id": "r2"}');
-- Writes: kept once per (task, idx); LangGraph's special writes (negative idx) replace.
SELECT checkpoint_put_writes('g1', '', 'c2', 'task-b', 'p1', '{0,1}', '{a,b}', '{json,json}', ARRAY['\x0a'::bytea, '\x0b']) AS written;
SELECT checkpoint_put_writes('g1', '', 'c2', 'task-a', 'p0', '{0}', '{a}', '{json}', ARRAY['\x0c'::bytea]) AS written;
SELECT checkpoint_put_writes('g1', '', 'c2', 'task-a', 'p0', '{0}', '{a}', '{json}', ARRAY['\x0d'::bytea]) AS again;
SELECT checkpoint_put_writes('g1', '', 'c2', 'task-a', 'p0', '{-1}', '{__error__}', '{json}', ARRAY['\x0e'::bytea], true) AS error;
SELECT checkpoint_put_writes('g1', '', 'c2', 'task-a', 'p0', '{-1}', '{__error__}', '{json}', ARRAY['\x0f'::bytea], true) AS replaced;
SELECT checkpoint_id, parent_checkpoint_id, metadata ->> 'step' AS step, channel_values, pending_writes
FROM checkpoint_list('g1', '');
SELECT checkpoint_id, checkpoint_ns FROM checkpoint_get('g1');
SELECT checkpoint_id, checkpoint_ns FROM checkpoint_get('g1', 'child');
SELECT checkpoint_id FROM checkpoint_get('g1', '', 'c1');
SELECT count(*) AS none FROM checkpoint_get('g1', '', 'nope');
SELECT checkpoint_id FROM checkpoint_list(filter => '{"source": "loop"}');
SELECT checkpoint_id FROM checkpoint_list('g1', before => 'c2', "limit" => 5);
-- A copy is whole; prune keeps each namespace's latest; runs and threads delete with what they named.
SELECT checkpoint_copy_thread('g1', 'g2') AS copied;
SELECT checkpoint_id, checkpoint_ns, array_length(pending_writes, 1) AS writes FROM checkpoint_list('g2');
SELECT checkpoint_prune('{g2}') AS pruned;
SELECT checkpoint_id, checkpoint_ns FROM checkpoint_list('g2');
SELECT count(*) AS blobs_left FROM memory.checkpoint_blobs WHERE thread_id = 'g2';
SELECT checkpoint_delete_runs('{r1}') AS deleted;
SELECT thread_id, checkpoint_id FROM checkpoint_list();
SELECT checkpoint_save(NULL, 'g1', '{"also": true}') IS NOT NULL AS saved;
SELECT checkpoint_delete_thread('g1') AS deleted;
SELECT checkpoint_load(NULL, 'g1') IS NULL AS state_gone;
SELECT (SELECT count(*) FROM memory.checkpoint_steps WHERE thread_id = 'g1')
     + (SELECT count(*) FROM memory.checkpoint_blobs WHERE thread_id = 'g1')
     + (SELECT count(*) FROM memory.checkpoint_writes WHERE thread_id = 'g1') AS g1_rows;
-- Another tenant sees none of it.
SET memory_ext.user_id = 'cp-other';
SELECT count(*) AS seen FROM checkpoint_list();
SELECT checkpoint_list(user_id => 'cp-user');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.user_id = 'cp-user';
-- Bad input: its SQLSTATE, nothing written.
SELECT checkpoint_put('g3', '', '', NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put('g3', NULL, 'c1', NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put('g3', '', 'c1', NULL, '[1]');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put('g3', '', 'c1', NULL, '{}', '{}', '{a,b}', '{1}', '{json}', ARRAY['\x01'::bytea]);
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put('g3', '', 'c1', '', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put('g3', '', repeat('x', 201), NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
-- 0.13.0: a key shows as itself (no control, line-separator or invisible characters).
SELECT checkpoint_put('g3', E'\n</x>', 'c1', NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put('g3', '', E'c\u200b1', NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put_writes('g3', '', 'c1', E'task\n</x>', '', '{0}', '{a}', '{json}', ARRAY['\x01'::bytea]);
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_put_writes('g3', '', 'c1', 't', '', '{0,0}', '{a,a}', '{json,json}', ARRAY['\x01'::bytea, '\x02']);
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_list("limit" => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT checkpoint_prune('{g3}', 'everything');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS g3_rows FROM memory.checkpoint_steps WHERE thread_id = 'g3';
RESET ROLE;
