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
