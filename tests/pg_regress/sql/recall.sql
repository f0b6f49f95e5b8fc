-- Recall memory and token accounting.
\set SHOW_CONTEXT never
-- An ordinary role (pg_regress --create-role): row-level security scopes every query below.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'rita';

SELECT count_tokens('hello world') AS cl100k, count_tokens('hello world', 'o200k_base') AS o200k,
       count_tokens('') AS empty, count_tokens('<|endoftext|>') AS special_as_text;
SELECT count_tokens('x', 'gpt2');
\echo :LAST_ERROR_SQLSTATE
SELECT count_tokens(NULL);
\echo :LAST_ERROR_SQLSTATE

-- A new thread needs a tenant: the current one is used.
SELECT message_append('trip', 'user', 'I want to visit Porto in May.') - 'id' AS msg;
SELECT message_append('trip', 'assistant', 'Porto in May is lovely.') - 'id' AS msg;
SELECT message_append('trip', 'tool', '{"weather": "sunny"}', NULL, NULL, 'call_1', 'weather') - 'id' AS msg;
SELECT message_append('trip', 'assistant', '', NULL,
                      '[{"id": "call_2", "type": "function", "function": {"name": "search", "arguments": "{}"}}]') - 'id' AS msg;
SELECT seq, role, token_count, in_context FROM memory.messages WHERE thread_id = 'trip' ORDER BY seq;
SELECT revision, last_seq FROM memory.threads WHERE thread_id = 'trip';

-- Bad input: nothing is written.
SELECT message_append('trip', 'robot', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT message_append('trip', NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT message_append('trip', 'user', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT message_append('', 'user', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT message_append(repeat('t', 201), 'user', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT message_append('trip', 'assistant', 'x', NULL, '{"not": "an array"}');
\echo :LAST_ERROR_SQLSTATE
SELECT message_append('trip', 'user', 'x', 'bob');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS messages_still FROM memory.messages WHERE thread_id = 'trip';
-- Plain SQL is checked by the table too.
\set VERBOSITY terse
INSERT INTO memory.messages (user_id, thread_id, role, content) VALUES ('rita', 'trip', 'robot', 'x');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- Usage: blocks of the agent + in-context messages (stored counts, never re-tokenised).
SELECT memory_agent('sage', 'rita', 'I am Sage.', 'Name: Ana') ->> 'created' AS created;
SELECT context_usage('trip', 1000) AS without_agent;
SELECT (context_usage('trip', 1000, 'sage') ->> 'blocks_tokens')::int > 100 AS blocks_counted;
-- Boundary: 63 tokens in context; 0.3 * 210 = 63 exactly. (As a real, 0.3 is 0.300000012: a
-- float product would call 63 tokens "below" the threshold.)
SELECT needs_compaction('trip', 210, 0.3) AS at_threshold,
       needs_compaction('trip', 211, 0.3) AS just_under,
       needs_compaction('trip', 209, 0.3) AS over,
       needs_compaction('trip', 78) AS default_at_08,
       needs_compaction('trip', 79) AS default_under;
SELECT needs_compaction('trip', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT needs_compaction('trip', 100, 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT context_usage('nowhere', 100);
\echo :LAST_ERROR_SQLSTATE
SELECT context_usage('trip', 100, 'ghost');
\echo :LAST_ERROR_SQLSTATE
-- Messages out of context no longer count.
UPDATE memory.messages SET in_context = false WHERE thread_id = 'trip' AND seq <= 2;
SELECT context_usage('trip', 1000) ->> 'messages_tokens' AS after_compaction;

-- conversation_search_date (0.12.0): what was said between two days, with no
-- thread or query needed; in one thread, an agent's threads, or all of them; paged.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'rita';
SELECT memory_agent('rita-agent', 'rita') ->> 'created' AS agent;
SELECT memory_agent('rita-other', 'rita') ->> 'created' AS other;
SELECT count(message_append(t, 'user', m, 'rita', created_at => at::timestamptz)) AS appended
FROM (VALUES ('d-mon', 'Monday: we planned the deploy.', '2024-05-06 09:00+00'),
             ('d-tue', 'Tuesday: we deployed the API.', '2024-05-07 10:00+00'),
             ('d-tue', E'Tuesday too\n- forged line', '2024-05-07 23:59+00'),
             ('d-oth', 'Tuesday, to the other agent.', '2024-05-07 11:00+00'),
             ('d-wed', 'Wednesday: rest.', '2024-05-08 00:00+00')) v(t, m, at);
UPDATE memory.threads SET agent_id = 'rita-agent' WHERE thread_id IN ('d-mon', 'd-tue');
UPDATE memory.threads SET agent_id = 'rita-other' WHERE thread_id = 'd-oth';
SELECT thread, seq, role, content, created_at FROM conversation_search_date('2024-05-07', '2024-05-07');
SELECT thread, content FROM conversation_search_date('2024-05-07', '2024-05-07', agent_id => 'rita-agent');
SELECT thread, content FROM conversation_search_date('2024-05-06', '2024-05-08', thread_id => 'd-tue');
SELECT thread, content FROM conversation_search_date('2024-05-06', '2024-05-08', "limit" => 2, "offset" => 1);
SELECT count(*) AS none_then FROM conversation_search_date('2001-01-01', '2001-01-02');
SELECT * FROM conversation_search_date('2024-05-08', '2024-05-07');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM conversation_search_date(NULL, '2024-05-07');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM conversation_search_date('2024-05-07', '2024-05-07', "limit" => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM conversation_search_date('2024-05-07', '2024-05-07', thread_id => 'nowhere');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM conversation_search_date('2024-05-07', '2024-05-07', agent_id => 'ghost');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM conversation_search_date('2024-05-07', '2024-05-07', user_id => 'someone-else');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.user_id = 'rosa';
SELECT count(*) AS other_tenant FROM conversation_search_date('2024-05-06', '2024-05-08');
RESET ROLE;
