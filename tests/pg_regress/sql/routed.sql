-- The *_for forms (docs/api.md "Routed calls"): memory_query, memory_write, message_append,
-- compile_core_blocks and memory_context with the tenant as their first argument. On Citus
-- they run wholly on the tenant's worker (tests/python/test_citus.py); on one node they answer
-- as the originals do for that tenant.
\set SHOW_CONTEXT never
RESET memory_ext.user_id;
-- No tenant set: the argument is the call's tenant, and the setting is put back afterwards.
SELECT memory_write_for('rt-ana', '{"text": "Ana keeps bees on the roof.", "thread_id": "t1"}') ->> 'event' AS event;
SELECT current_setting('memory_ext.user_id') = '' AS setting_put_back;
SELECT regexp_replace(jsonb_path_query(memory_query_for('rt-ana', '{"query": "what does Ana keep on the roof"}'), '$.items[*].text') #>> '{}',
                      '^\(\d{4}-\d\d-\d\d\) ', '') AS found;
SELECT memory_query_for('rt-bob', '{"query": "what does Ana keep on the roof"}') ->> 'empty_reason' AS bob_sees;
SELECT message_append_for('rt-ana', 't1', 'user', 'The hive is doing well.',
                          '{"metadata": {"mood": "glad"}, "idempotency_key": "m-1", "name": "ana"}') ->> 'seq' AS seq;
SELECT message_append_for('rt-ana', 't1', 'user', 'The hive is doing well.',
                          '{"metadata": {"mood": "glad"}, "idempotency_key": "m-1", "name": "ana"}') ->> 'seq' AS same_seq;
SELECT role, content, name, metadata FROM memory.messages WHERE user_id = 'rt-ana' ORDER BY seq;
SELECT message_append_for('rt-ana', 't1', 'assistant', 'Noted.', '{"created_at": "2020-01-02T03:04:05Z", "tool_calls": null}') ->> 'seq' AS seq;
SELECT created_at = '2020-01-02T03:04:05Z' AS kept_created_at FROM memory.messages WHERE user_id = 'rt-ana' AND seq = 2;
-- The same answers as the originals with the tenant set.
SET memory_ext.user_id = 'rt-ana';
SELECT memory_agent('rt-agent', 'rt-ana', 'I help.', 'Ana.') ->> 'agent_id' AS agent;
SELECT compile_core_blocks_for('rt-ana', 'rt-agent', '2026-01-01T00:00:00Z') = compile_core_blocks('rt-agent', '2026-01-01T00:00:00Z') AS same_blocks;
-- (A thread's first context and its later ones differ in their delta header.)
SELECT memory_context('rt-agent', 't1', 'bees', 400) LIKE '%Ana keeps bees on the roof.%' AS first_context;
SELECT memory_context_for('rt-ana', 'rt-agent', 't1', 'bees', 400) = memory_context('rt-agent', 't1', 'bees', 400) AS same_context;
SELECT memory_query_for('rt-ana', '{"query": "bees"}') -> 'items' = memory_query('{"query": "bees"}') -> 'items' AS same_items;
-- A session with a tenant acts for it only: naming another is 42501, as in the originals.
SELECT memory_query_for('rt-bob', '{"query": "bees"}');
SELECT memory_write_for('rt-bob', '{"text": "planted"}');
SELECT message_append_for('rt-bob', 't9', 'user', 'planted');
RESET memory_ext.user_id;
-- Strict: a NULL argument is a NULL answer, nothing run.
SELECT memory_query_for(NULL, '{"query": "x"}') IS NULL AS q,
       memory_write_for('rt-ana', NULL) IS NULL AS w,
       message_append_for(NULL, 't1', 'user', 'x') IS NULL AS m,
       compile_core_blocks_for(NULL, 'rt-agent') IS NULL AS b,
       memory_context_for('rt-ana', 'rt-agent', 't1', 'x', NULL) IS NULL AS c;
SELECT count(*) AS memories FROM memory.items WHERE user_id = 'rt-ana';
-- Bad input: the original's errors.
SELECT message_append_for('rt-ana', 't1', 'user', 'x', '{"bogus": 1}');
SELECT message_append_for('rt-ana', 't1', 'user', 'x', '[]');
SELECT message_append_for('rt-ana', 't1', 'user', 'x', '{"name": 7}');
SELECT message_append_for('rt-ana', 't1', 'user', 'x', '{"created_at": "soon"}');
SELECT message_append_for('rt-ana', 't1', 'user', 'x', '{"tool_calls": {"id": 1}}');
SELECT memory_write_for('rt-ana', '{"text": ""}');
SELECT memory_write_for('', '{"text": "x"}');
SELECT memory_context_for('rt-ana', 'rt-agent', 't1', 'x', 0);
SELECT count(*) AS messages FROM memory.messages WHERE user_id = 'rt-ana';
