-- Limits on one call (memory_ext.max_* settings, docs/operations.md "Limits"): each is a clear
-- error naming the argument and the setting, and nothing is written. Set low here to test them.
\set SHOW_CONTEXT never
\set VERBOSITY terse
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE 'SELECT ' || q;
    RETURN 'ok';
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;
SET memory_ext.max_value_bytes = 2048;
SET memory_ext.max_query_chars = 20;
SET memory_ext.max_batch = 3;
SET memory_ext.max_categories = 2;
SET memory_ext.regex_timeout_ms = 200;
SET memory_ext.user_id = 'limits';
SELECT n, pg_temp.try(q) AS result
FROM unnest(ARRAY[
    $q$memory_write(jsonb_build_object('text', 'A short fact.', 'content', repeat('x', 3000)))$q$,
    $q$message_append('l-thread', 'user', repeat('y', 3000))$q$,
    $q$memory_file_write('big.md', repeat('z', 3000))$q$,
    $q$memory_ref_store(repeat('w', 3000), 'a big output')$q$,
    $q$checkpoint_save('limits', 'l-thread', jsonb_build_object('state', repeat('v', 3000)))$q$,
    $q$memory_query('{"query": "a question much longer than twenty characters"}')$q$,
    $q$memory_search('a question much longer than twenty characters')$q$,
    $q$conversation_search('l-thread', 'a question much longer than twenty characters')$q$,
    $q$memory_file_search('a question much longer than twenty characters')$q$,
    $q$memory_write_batch('[{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]')$q$,
    $q$memory_embed_batch(ARRAY['a', 'b', 'c', 'd'])$q$,
    $q$memory_configure('{"categories": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}')$q$
]) WITH ORDINALITY AS t(q, n);
-- Within the limits, the same calls work.
SELECT memory_write(jsonb_build_object('text', 'A short fact.', 'content', repeat('x', 1000))) ->> 'event' AS write_ok;
SELECT (checkpoint_save('limits', 'l-thread', '{"state": 1}') ->> 'thread_id') AS checkpoint_ok;
SELECT memory_configure('{"categories": [{"name": "a"}, {"name": "b"}]}') ->> 'categories' AS categories_ok;
SELECT count(*) AS nothing_else_written FROM memory.items WHERE user_id = 'limits';
-- A regular expression that runs too long is cancelled with a message naming the setting.
-- (Backreferences make Postgres's engine backtrack: this one runs for minutes on 201 letters.)
SELECT memory_file_write('bomb.md', repeat('a', 201)) ->> 'event' AS written;
-- (57014 like statement_timeout: a cancellation, which PL/pgSQL's WHEN OTHERS does not catch.)
SELECT count(*) FROM memory_file_grep('^(a+)(a+)(a+)(a+)\4\3\2\1$');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS ordinary_grep FROM memory_file_grep('a{3}');
-- 0.9.0: one size rule for every write path, the whole value after an edit, and the same
-- request limits for tool arguments as for SQL calls (the answer says what the limit is).
SELECT memory_agent('limits-agent', 'limits') IS NOT NULL AS agent;
SELECT n, pg_temp.try(q) AS result
FROM unnest(ARRAY[
    $q$session_add_items('limits-s', jsonb_build_array(jsonb_build_object('role', 'user', 'content', repeat('x', 3000))), 'limits')$q$,
    $q$message_append('limits-t', 'user', repeat('x', 3000), 'limits')$q$,
    $q$memory_write(jsonb_build_object('text', 'A fact.', 'metadata', jsonb_build_object('blob', repeat('x', 3000))))$q$,
    $q$memory_write(jsonb_build_object('text', repeat('word ', 600), 'kind', 'archival'))$q$
]) WITH ORDINALITY AS t(q, n);
SELECT n, memory_tool_call('limits-agent', NULL, name, args) AS answer
FROM (VALUES (1, 'archival_search', jsonb_build_object('query', repeat('bees ', 10))),
             (2, 'conversation_search', jsonb_build_object('query', repeat('bees ', 10))),
             (3, 'archival_insert', jsonb_build_object('content', repeat('bees ', 600))),
             (4, 'memory', jsonb_build_object('command', 'create', 'path', '/memories/big.md', 'file_text', repeat('x', 3000)))) v(n, name, args);
SELECT count(*) AS nothing_written FROM memory.messages WHERE user_id = 'limits';
-- JSON no reader could read back is refused where it is written: nested deeper than 128 levels,
-- or a number beyond a 64-bit float (jsonb itself stores both).
SELECT pg_temp.try(format('checkpoint_save(%L, %L, %L::jsonb)', 'limits', 'cp', repeat('[', 200) || repeat(']', 200))) AS deep,
       pg_temp.try($q$checkpoint_save('limits', 'cp', '{"n": 1e400}')$q$) AS huge_number,
       pg_temp.try($q$checkpoint_save('limits', 'cp', '{"n": 1e300, "ok": [[[1]]]}')$q$) AS fine;
-- A row written around the API by plain SQL does not break its readers: the export passes it
-- through; query and search show the value as unreadable.
SELECT memory_write('{"text": "Limits keeps bees.", "kind": "archival"}') ->> 'event' AS written;
UPDATE memory.items SET metadata = jsonb_build_object('deep', (repeat('[', 200) || repeat(']', 200))::jsonb, 'n', '1e400'::jsonb)
WHERE user_id = 'limits' AND text = 'Limits keeps bees.';
SELECT jsonb_typeof(memory_export('limits') -> 'memories') AS export_whole;
SELECT i -> 'metadata' AS metadata FROM jsonb_array_elements(memory_query('{"query": "bees", "return": "full"}') -> 'items') i;
SELECT count(*) AS found FROM memory_search('bees');
-- memory_search's filters must be an object (was XX000 for an array).
SELECT pg_temp.try($q$memory_search('x', 'limits', 1, '[]'::jsonb)$q$) AS array_filters;
RESET memory_ext.max_value_bytes;
RESET memory_ext.max_query_chars;
RESET memory_ext.max_batch;
RESET memory_ext.max_categories;
RESET memory_ext.regex_timeout_ms;
RESET memory_ext.user_id;
