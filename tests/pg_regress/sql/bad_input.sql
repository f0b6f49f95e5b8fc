-- Bad input, function by function: each call fails with a clear message and the SQLSTATE of
-- API.md, writes nothing, and leaves the backend alive.
\set SHOW_CONTEXT never
-- An ordinary role (pg_regress --create-role): row-level security scopes every query below.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'bad';
SELECT memory_agent('ok-agent', 'bad', 'p', 'h') ->> 'created' AS created;
SELECT message_append('ok-thread', 'user', 'hello') ->> 'seq' AS seq;
CREATE TEMP TABLE before AS
SELECT (SELECT count(*) FROM memory.agents) AS agents, (SELECT count(*) FROM memory.blocks) AS blocks,
       (SELECT count(*) FROM memory.messages) AS messages, (SELECT count(*) FROM memory.history) AS history,
       (SELECT sum(version) FROM memory.blocks) AS versions;
-- Each call runs in its own subtransaction; the result is its SQLSTATE and message.
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE 'SELECT ' || q;
    RETURN 'ok';
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;

SELECT n, left(q, 70) AS call, pg_temp.try(q) AS result
FROM unnest(ARRAY[
    $q$memory_agent(NULL, 'bad')$q$,
    $q$memory_agent('  ', 'bad')$q$,
    $q$memory_agent(repeat('a', 201), 'bad')$q$,
    $q$memory_agent(repeat('x', 1048576), 'bad')$q$,
    $q$memory_agent(E'a\tb', 'bad')$q$,
    $q$memory_agent('x', '')$q$,
    $q$memory_agent('x', 'someone-else')$q$,
    $q$memory_agent('x', 'bad', NULL)$q$,
    $q$memory_agent('x', 'bad', repeat('x', 1048576))$q$,
    $q$memory_agent('x', 'bad', 'p', repeat('x', 1048576))$q$,
    $q$block_set(NULL, 'l', 'v')$q$,
    $q$block_set('ok-agent', NULL, 'v')$q$,
    $q$block_set('ok-agent', '', 'v')$q$,
    $q$block_set('ok-agent', repeat('x', 1048576), 'v')$q$,
    $q$block_set('ok-agent', 'l', NULL)$q$,
    $q$block_set('ok-agent', 'l', 'v', NULL, NULL)$q$,
    $q$block_set('ok-agent', 'l', 'v', NULL, -5)$q$,
    $q$block_set('ok-agent', 'l', 'v', NULL, 2000000000)$q$,
    $q$block_set('ok-agent', 'l', repeat('x', 1048576))$q$,
    $q$block_set('ok-agent', 'l', 'v', NULL, 20000, NULL)$q$,
    $q$block_set('ghost', 'l', 'v')$q$,
    $q$block_append('ok-agent', 'human', repeat('x', 1048576))$q$,
    $q$block_append('ok-agent', 'nope', 'x')$q$,
    $q$block_append('', 'human', 'x')$q$,
    $q$block_replace('ok-agent', 'human', NULL, 'x')$q$,
    $q$block_replace('ok-agent', 'human', 'h', NULL)$q$,
    $q$block_replace('ok-agent', 'human', repeat('x', 1048576), 'x')$q$,
    $q$block_replace('ok-agent', 'human', 'h', repeat('x', 1048576))$q$,
    $q$block_insert('ok-agent', 'human', NULL)$q$,
    $q$block_insert('ok-agent', 'human', 'x', NULL)$q$,
    $q$block_insert('ok-agent', 'human', 'x', -2147483648)$q$,
    $q$block_insert('ok-agent', 'human', 'x', 2147483647)$q$,
    $q$compile_core_blocks(NULL)$q$,
    $q$compile_core_blocks('ghost')$q$,
    $q$compile_core_blocks('ok-agent', NULL)$q$,
    $q$message_append(NULL, 'user', 'x')$q$,
    $q$message_append('ok-thread', '', 'x')$q$,
    $q$message_append('ok-thread', 'USER', 'x')$q$,
    $q$message_append('ok-thread', 'user', 'x', '')$q$,
    $q$message_append('ok-thread', 'user', 'x', NULL, '"text"')$q$,
    $q$message_append('ok-thread', 'user', 'x', NULL, NULL, '')$q$,
    $q$message_append('ok-thread', 'user', 'x', NULL, NULL, NULL, repeat('n', 201))$q$,
    $q$message_append('ok-thread', 'user', repeat('x', 16777217))$q$,
    $q$count_tokens('x', NULL)$q$,
    $q$count_tokens('x', '')$q$,
    $q$count_tokens(repeat('x', 16777217))$q$,
    $q$context_usage(NULL, 100)$q$,
    $q$context_usage('ok-thread', NULL)$q$,
    $q$context_usage('ok-thread', -1)$q$,
    $q$context_usage('ghost', 100)$q$,
    $q$context_usage('ok-thread', 100, '')$q$,
    $q$needs_compaction('ok-thread', 100, NULL)$q$,
    $q$needs_compaction('ok-thread', 100, 0)$q$,
    $q$needs_compaction('ok-thread', 100, -0.5)$q$,
    $q$needs_compaction('ok-thread', 100, 'NaN')$q$,
    $q$needs_compaction('ok-thread', 100, 'Infinity')$q$,
    $q$needs_compaction('ok-thread', 2147483647, 1)$q$
]) WITH ORDINALITY AS t(q, n)
ORDER BY n;

-- Nothing above wrote anything; the backend is alive.
SELECT (SELECT count(*) FROM memory.agents) = agents AS agents_same,
       (SELECT count(*) FROM memory.blocks) = blocks AS blocks_same,
       (SELECT count(*) FROM memory.messages) = messages AS messages_same,
       (SELECT count(*) FROM memory.history) = history AS history_same,
       (SELECT sum(version) FROM memory.blocks) = versions AS versions_same
FROM before;
-- The big inputs that are valid work.
SELECT (message_append('ok-thread', 'tool', repeat('word ', 209715), NULL, NULL, 'call-1') ->> 'tokens')::int > 200000 AS one_mb_message;
SELECT count_tokens(repeat('x', 1048576)) > 100000 AS one_mb_counted;
