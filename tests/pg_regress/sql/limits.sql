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
RESET memory_ext.max_value_bytes;
RESET memory_ext.max_query_chars;
RESET memory_ext.max_batch;
RESET memory_ext.max_categories;
RESET memory_ext.regex_timeout_ms;
RESET memory_ext.user_id;
