-- Layer-2 detail memory (docs/design.md "Detail memory"): store, page through, capture; the Layer-1 line is a
-- memory that memory_query finds, the content stays out of retrieval; bad input fails cleanly.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'dee';
-- A bullet's date (when the memory happened: today, as these memories are written now) masked;
-- any day matches, so a run that crosses midnight passes.
CREATE FUNCTION pg_temp.dated(t text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(t, '\(\d{4}-\d{2}-\d{2}\) ', '(<today>) ', 'g')
$$;

-- Keys are readable slugs of the description, numbered when taken; UUIDs otherwise.
SELECT memory_ref_store(repeat('npm http fetch GET 200 https://registry.npmjs.org/pkg' || E'\n', 100),
                        'npm install log', thread_id => 'build') - 'id' AS stored;
SELECT memory_ref_store('second run', 'npm install log') - 'id' AS stored;
SELECT (memory_ref_store('x', '日本語のログ') ->> 'key') ~ '^[0-9a-f-]{36}$' AS uuid_key;
SELECT memory_ref_store('{"rows": 3}', 'orders query result', 'db_result', metadata => '{"sql": "SELECT 1"}') - 'id' AS stored;
SELECT key, type, chars, description, thread_id, metadata FROM memory.details WHERE key NOT LIKE '%-%' ORDER BY key;

-- Pages by characters: next_offset until the end, then NULL.
SELECT memory_ref_get('npm_install_log', 0, 53);
SELECT memory_ref_get('npm_install_log', 5247, 100);
SELECT memory_ref_get('npm_install_log', 9000);
SELECT memory_ref_get('npm_install_log_2');

-- The Layer-1 line: a 'detail' memory whose text is the placeholder, found by memory_query.
SELECT kind, key, text FROM memory.items WHERE kind = 'detail' AND key NOT LIKE '%-%' ORDER BY key;
SELECT pg_temp.dated(i->>'text') AS hit FROM jsonb_array_elements(memory_query('{"query": "npm install log", "top_k": 1}')->'items') i;

-- Capture: small output comes back as is; large output becomes one line with its placeholder.
SELECT memory_capture('npm install', 'added 3 packages in 2s');
SELECT memory_capture('cargo build',
    repeat(E'   Compiling crate v1.0.0\n', 300) || E'error[E0425]: cannot find value `y` in this scope\nerror: could not compile `app` due to 1 previous error\n',
    thread_id => 'build');
SELECT memory_capture('make test', repeat(E'ok test\n', 600) || E'test result: ok. 600 passed\n', 100);
SELECT key, chars, metadata FROM memory.details WHERE key LIKE 'cmd_%' ORDER BY key;
SELECT memory_ref_get('cmd_cargo_build', 7500) ->> 'content' AS tail;

-- Another tenant sees none of it.
SET memory_ext.user_id = 'dee-other';
SELECT memory_ref_get('npm_install_log');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_store('x', 'y', user_id => 'dee');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.user_id = 'dee';

-- Bad input, nothing stored.
SELECT count(*) AS details_before FROM memory.details;
SELECT memory_ref_store(NULL, 'd');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_store('c', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_store('c', '   ');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_store('c', 'd', 'bad type!');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_store('c', 'd', metadata => '[1]');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_store('c', 'd', thread_id => '');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_get('nope');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_get(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_get('npm_install_log', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_get('npm_install_log', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_ref_get('npm_install_log', 0, 1000001);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_capture('', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_capture('ls', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_capture('ls', 'x', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS details_after FROM memory.details;

-- A forgotten detail memory is no longer served.
SELECT memory_forget((SELECT id FROM memory.items WHERE key = 'npm_install_log_2')) ->> 'state' AS state;
SELECT memory_ref_get('npm_install_log_2');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- Detail memory by agent and thread (0.12.0): a detail keeps the agent
-- it was stored for; memory_ref_search finds details by their descriptions, within a thread or
-- for an agent when asked.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'dee';
SELECT memory_agent('dee-agent', 'dee') ->> 'created' AS agent;
SELECT memory_ref_store(E'Step 1/9 FROM rust\nStep 2/9 RUN cargo build', 'docker build log',
                        agent_id => 'dee-agent', thread_id => 'dee-t1') ->> 'key' AS key;
SELECT memory_capture('cargo test --workspace', repeat('test ok' || E'\n', 400), agent_id => 'dee-agent') AS captured;
SELECT key, agent_id, thread_id FROM memory.details WHERE key IN ('docker_build_log', 'cmd_cargo_test_workspace') ORDER BY key;
SELECT agent_id FROM memory.items WHERE key = 'docker_build_log';
SELECT key, description, type, thread, agent, chars FROM memory_ref_search('docker build');
SELECT key FROM memory_ref_search('docker build', thread_id => 'dee-t1');
SELECT count(*) AS in_another_thread FROM memory_ref_search('docker build', thread_id => 'dee-t2');
SELECT key FROM memory_ref_search('cargo test', agent_id => 'dee-agent', "limit" => 1);
-- The content is not searched: it is what the key opens.
SELECT count(*) AS content_not_searched FROM memory_ref_search('rust') WHERE key = 'docker_build_log' AND score > 0.5;
SELECT memory_ref_store('x', 'y', agent_id => 'nobody');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_ref_search('x', "limit" => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_ref_search(NULL);
\echo :LAST_ERROR_SQLSTATE
-- Another tenant finds none of it.
SET memory_ext.user_id = 'dan';
SELECT count(*) AS other_tenant FROM memory_ref_search('docker build');
RESET ROLE;
