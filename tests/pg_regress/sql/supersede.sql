-- Supersede (docs/api.md "Supersede", 0.5.0): a newer fact replaces an older one. The older one
-- ends where the newer happens, links to it, leaves recall, and stays in history, export and
-- as_of queries.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'sup-sam';
SELECT memory_write('{"text": "Sam lives in Boston.", "category": "home", "thread_id": "sup-t", "happened_at": "2023-03-01"}') ->> 'event' AS boston;
SELECT memory_write('{"text": "Sam works as a nurse at the city hospital.", "thread_id": "sup-t", "happened_at": "2023-03-01"}') ->> 'event' AS nurse;
SELECT memory_delta('sup-t', 0) <> '' AS header_before;
SELECT r ->> 'event' AS event, r ->> 'superseded' = (SELECT id::text FROM memory.items WHERE text = 'Sam lives in Boston.') AS superseded_boston
FROM memory_write(jsonb_build_object('text', 'Sam moved to Denver.', 'category', 'home', 'thread_id', 'sup-t',
                  'happened_at', '2024-06-01', 'supersedes', (SELECT id FROM memory.items WHERE text = 'Sam lives in Boston.'))) r;
SELECT text, state, to_char(valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS valid_until,
       superseded_by = (SELECT id FROM memory.items WHERE text = 'Sam moved to Denver.') AS links_successor
FROM memory.items WHERE user_id = 'sup-sam' ORDER BY created_at;

-- Recall leaves it out by default; include_superseded and as_of bring it back.
SELECT i ->> 'text' AS recalled FROM jsonb_array_elements(memory_query('{"query": "Where does Sam live?", "top_k": 3}') -> 'items') i;
SELECT i ->> 'text' AS recalled, i ? 'superseded_by' AS superseded
FROM jsonb_array_elements(memory_query('{"query": "Where does Sam live?", "top_k": 3, "include_superseded": true}') -> 'items') i
ORDER BY 1;
SELECT i ->> 'text' AS true_in_mid_2023 FROM jsonb_array_elements(memory_query('{"query": "Where does Sam live?", "top_k": 3, "as_of": "2023-07-01"}') -> 'items') i;
SELECT i ->> 'text' AS true_in_mid_2024 FROM jsonb_array_elements(memory_query('{"query": "Where does Sam live?", "top_k": 3, "as_of": "2024-07-01"}') -> 'items') i;
SELECT text AS searched_as_of_2023 FROM memory_search('Sam home city', filters => '{"as_of": "2023-07-01", "category": "home"}');
SELECT text AS searched_now FROM memory_search('Sam home city', filters => '{"category": "home"}');

-- History, the change log (the delta header) and export keep it.
SELECT event, old_ref FROM memory_history((SELECT id FROM memory.items WHERE text = 'Sam lives in Boston.')) ORDER BY ts;
SELECT memory_delta('sup-t', 2);
SELECT m ->> 'text' AS text, m ->> 'state' AS state, m ? 'superseded_by' AS has_link
FROM jsonb_array_elements(memory_export('sup-sam') -> 'memories') m ORDER BY m ->> 'created_at';

-- Mistakes fail the whole write, with nothing stored (errors shown with ids masked).
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f-]{27}', '<id>', 'g');
END $$;
SELECT pg_temp.try(format('SELECT memory_write(%L)', jsonb_build_object('text', 'Sam moved to Austin.',
       'supersedes', (SELECT id FROM memory.items WHERE text = 'Sam lives in Boston.')))) AS already_superseded;
SELECT pg_temp.try($$SELECT memory_write('{"text": "Sam moved to Austin.", "supersedes": "00000000-0000-4000-8000-000000000000"}')$$) AS unknown;
SELECT memory_write('{"text": "Sam moved to Austin.", "supersedes": "boston"}');
SELECT memory_write(jsonb_build_object('text', 'Sam moved to Austin.', 'id', (SELECT id FROM memory.items WHERE text = 'Sam moved to Denver.'),
                                       'supersedes', (SELECT id FROM memory.items WHERE text = 'Sam moved to Denver.')));
SELECT count(*) AS nothing_written FROM memory.items WHERE user_id = 'sup-sam' AND text LIKE '%Austin%';
-- Another tenant's memory is not found.
SELECT id AS denver_id FROM memory.items WHERE text = 'Sam moved to Denver.' \gset
SET memory_ext.user_id = 'sup-tom';
SELECT pg_temp.try(format('SELECT memory_write(%L)', jsonb_build_object('text', 'Tom moved to Denver.', 'supersedes', :'denver_id'::text))) AS other_tenant;
SELECT count(*) AS nothing_written FROM memory.items WHERE user_id = 'sup-tom';
SET memory_ext.user_id = 'sup-sam';
-- Rewriting the successor's exact text supersedes nothing new: a noop.
SELECT memory_write('{"text": "Sam moved to Denver."}') ->> 'event' AS same_text;
-- A superseded memory can be forgotten, and comes back superseded.
SELECT memory_forget((SELECT id FROM memory.items WHERE text = 'Sam lives in Boston.')) ->> 'state' AS forgotten;
SELECT memory_restore((SELECT id FROM memory.items WHERE text = 'Sam lives in Boston.')) ->> 'state' AS restored;
SELECT i ->> 'text' AS still_out_of_recall FROM jsonb_array_elements(memory_query('{"query": "Where does Sam live?", "top_k": 3}') -> 'items') i;
SELECT string_agg(event, ', ' ORDER BY ts) AS boston_history FROM memory_history((SELECT id FROM memory.items WHERE text = 'Sam lives in Boston.'));
