-- memory_write / memory_query / memory_search / memory_delta / memory_context /
-- conversation_search / memory_configure / memory_history / memory_export: response formats and
-- errors. Ids and clocks are masked; vectors come from the built-in model (deterministic).
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'mona';
-- A bullet's date (when the memory happened: today, as these memories are written now) masked;
-- any day matches, so a run that crosses midnight passes.
CREATE FUNCTION pg_temp.dated(t text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(t, '\(\d{4}-\d{2}-\d{2}\) ', '(<today>) ', 'g')
$$;
-- Masks a response's generated id(s) and today's date in bullets.
CREATE FUNCTION pg_temp.masked(j jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT pg_temp.dated(regexp_replace(j::text, '"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"', '"<id>"', 'g'))::jsonb
$$;

-- Writes: created, exact duplicate (whitespace and case), near duplicate, an unrelated fact.
SELECT pg_temp.masked(memory_write('{"text": "Mona prefers green tea over coffee.", "category": "preferences", "importance": 3, "thread_id": "m1", "tags": ["drinks"]}'));
SELECT pg_temp.masked(memory_write('{"text": "  mona prefers green tea   over COFFEE. ", "thread_id": "m1"}'));
SELECT pg_temp.masked(memory_write('{"text": "Mona prefers green tea over coffee!", "thread_id": "m1", "tags": ["tea"]}'));
SELECT pg_temp.masked(memory_write('{"text": "The deployment is planned for Friday.", "category": "tasks", "thread_id": "m1"}'));
SELECT pg_temp.masked(memory_write('{"text": "Mona drinks two cups of tea every morning.", "category": "habits", "thread_id": "m1"}'));
-- A lower link threshold links the new memory to its neighbours, with their similarity.
SET memory_ext.link_threshold = 0.5;
SELECT jsonb_array_length(memory_write('{"text": "Mona likes tea with lemon.", "category": "preferences", "thread_id": "m1"}')->'related') > 0 AS linked;
RESET memory_ext.link_threshold;
SELECT text, importance, tags FROM memory.items ORDER BY created_at;
SELECT relation_type, count(*) FROM memory.relations GROUP BY 1 ORDER BY 1;

-- Write errors: nothing is stored.
SELECT memory_write('{"text": "x", "colour": "red"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write('{"text": "   "}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write(jsonb_build_object('text', repeat('a ', 150)));
\echo :LAST_ERROR_SQLSTATE
SELECT pg_temp.masked(memory_write(jsonb_build_object('text', repeat('a ', 150), 'kind', 'archival'))) ->> 'event' AS archival_may_be_long;
SELECT memory_write('{"text": "x", "importance": 9}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write('{"text": "x", "kind": "dream"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write('{"text": "x", "user_id": "someone-else"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write('{"text": "x", "id": "00000000-0000-0000-0000-000000000000"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write('{"text": "x", "embedding": [1, 2, 3]}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_write('[1, 2]');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS memories FROM memory.items;

-- Update by id keeps what the request does not name.
SELECT pg_temp.masked(memory_write(jsonb_build_object('id', id, 'text', 'The deployment moved to Monday.'))) ->> 'event' AS event
FROM memory.items WHERE text LIKE 'The deployment%';
SELECT category, text FROM memory.items WHERE text LIKE 'The deployment%';

-- Query: bullets. The thread changed since rev 0: the header lists the three latest changes.
SELECT pg_temp.masked(memory_query('{"query": "What does Mona drink?", "thread_id": "m1", "since_rev": 0, "top_k": 3}'));
-- Without since_rev: nothing new since the header was reported, so no header.
SELECT memory_query('{"query": "What does Mona drink?", "thread_id": "m1", "top_k": 1}') -> 'header' AS header_again;
SELECT memory_delta('m1', 4) AS delta_since_4;
SELECT memory_delta('m1', 100) AS nothing_since_100;
-- Full: content, score, importance, tags, metadata, updated_at, related.
SELECT array(SELECT jsonb_object_keys(i) ORDER BY 1) AS full_keys
FROM jsonb_array_elements(memory_query('{"query": "tea", "top_k": 1, "return": "full"}') -> 'items') i;
-- Budget: header + items never exceed it; the lowest ranked go.
SELECT (r->>'used_tokens')::int AS used, jsonb_array_length(r->'items') AS items
FROM (SELECT memory_query('{"query": "tea", "top_k": 5, "budget_tokens": 25}') AS r) s;
-- Threshold drops weak matches.
SELECT jsonb_array_length(memory_query('{"query": "tea", "top_k": 10, "threshold": 0.99}') -> 'items') AS above_099;
-- Filters.
SELECT pg_temp.dated(i->>'text') AS text FROM jsonb_array_elements(memory_query('{"query": "tea", "filters": {"importance_min": 3}}') -> 'items') i;
SELECT pg_temp.dated(i->>'text') AS text FROM jsonb_array_elements(memory_query('{"query": "tea", "filters": {"tags": ["tea"]}}') -> 'items') i;
SELECT pg_temp.dated(i->>'text') AS text FROM jsonb_array_elements(memory_query('{"query": "anything", "filters": {"category": "tasks"}}') -> 'items') i;
-- Query errors.
SELECT memory_query('{"query": "x", "filters": {"colour": 1}}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query('{"query": "x", "top_k": 0}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query('{"query": "x", "return": "everything"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query('{"query": "x", "filters": {"updated_after": "last week"}}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query('{"query": "x", "filters": {"user_id": "someone-else"}}');
\echo :LAST_ERROR_SQLSTATE

-- Categories and allowlists (docs/design.md "Categories and allowlists"): enforced whatever the filters say.
SELECT memory_configure('{"categories": {"system": [{"name": "preferences", "context": "all"}, {"name": "tasks", "context": "rag", "rag_length": 30}],
                                        "custom": [{"name": "habits"}]},
                          "allowlists": {"planner": ["tasks"], "stylist": ["preferences", "habits"]}}');
SELECT name, context, rag_length, custom FROM memory.categories ORDER BY name;
SELECT pg_temp.dated(i->>'text') AS text FROM jsonb_array_elements(memory_query('{"agent": "planner", "query": "tea"}') -> 'items') i;
SELECT i->>'category' FROM jsonb_array_elements(memory_query('{"agent": "stylist", "query": "tea", "categories": ["habits"]}') -> 'items') i;
SELECT memory_query('{"agent": "planner", "query": "tea", "categories": ["preferences", "habits"]}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query('{"agent": "stranger", "query": "tea"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_configure('{"allowlists": {"planner": ["unknown"]}}');
\echo :LAST_ERROR_SQLSTATE

-- memory_search: the same ranking as a table.
SELECT kind, category, text, importance FROM memory_search('morning tea', top_k => 2);

-- Recall search over messages, in context or not.
SELECT message_append('m1', 'user', 'I am flying to Porto on the 12th.') ->> 'seq' AS seq;
SELECT message_append('m1', 'assistant', 'Noted, enjoy the trip to Portugal.') ->> 'seq' AS seq;
SELECT message_append('m1', 'user', 'Can you remind me to buy sunscreen?') ->> 'seq' AS seq;
UPDATE memory.messages SET in_context = false WHERE seq = 1;
SELECT seq, role, content FROM conversation_search('m1', 'when is my flight?', "limit" => 2);
SELECT seq FROM conversation_search('m1', 'trip', roles => ARRAY['assistant']);
SELECT conversation_search('m1', 'x', roles => ARRAY['robot']);
\echo :LAST_ERROR_SQLSTATE

-- History of a memory, newest first; the export of the tenant.
SELECT event, old_ref, new_ref FROM memory_history((SELECT id FROM memory.items WHERE text LIKE 'Mona prefers%'))
WHERE event <> 'LINK';
SELECT array(SELECT jsonb_object_keys(memory_export(NULL)) ORDER BY 1) AS export_keys;
SELECT jsonb_array_length(memory_export('mona') -> 'memories') AS exported_memories;
