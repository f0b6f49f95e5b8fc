-- What an agent keeps, it reaches and fixes through its tools (docs/api.md "Agent tools"):
-- procedures and memory_query's filters, Letta's page sizes, turn numbers it can name,
-- consent by chat (only the user's own words in the thread decide), correcting and forgetting
-- a memory, writing files where the application allows, and "project: x" filing an episode.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'rex';
SELECT memory_agent('rex-agent', 'rex') ->> 'created' AS created;
CREATE FUNCTION pg_temp.call(thread text, tool text, args jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN (r ->> 'is_error')::boolean THEN 'ERROR: ' ELSE '' END
         || regexp_replace(regexp_replace(r ->> 'content', '\d{4}-\d\d-\d\d( \d\d:\d\d)?', 'YYYY-MM-DD', 'g'),
                           '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<id>', 'g')
  FROM memory_tool_call('rex-agent', thread, tool, args) r $$;

-- Procedures: a how-to question recalls the steps; other searches leave them out.
SELECT memory_write('{"user_id": "rex", "kind": "procedural", "text": "To deploy the shop: 1. run the tests 2. tag the release 3. push the tag to production."}') ->> 'event' AS event;
SELECT memory_write('{"user_id": "rex", "text": "Rex deployed the shop on a Friday and regretted it.", "tags": ["deploy"], "importance": 4, "happened_at": "2024-03-01"}') ->> 'event' AS event;
SELECT memory_write('{"user_id": "rex", "text": "Rex works at Acme.", "category": "work", "happened_at": "2024-06-01"}') ->> 'event' AS event;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "How do we deploy the shop?"}') AS how;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "deploy the shop"}') AS without_steps;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "deploy", "kinds": ["procedural"]}') AS only_steps;
SELECT pg_temp.call('rex-t1', 'archival_search', '{"query": "how to deploy the shop"}') AS search_how;
-- The filters a model can use, checked as the definition says.
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "Rex", "since": "2024-05-01"}') AS since;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "Rex", "until": "2024-03-01", "kinds": ["semantic"]}') AS until_day;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "Rex", "tags": ["deploy"], "min_importance": 4}') AS tagged;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "Rex", "as_of": "2024-04-01", "kinds": ["semantic"]}') AS as_of;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "x", "kinds": ["detail"]}') AS detail_kind;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "x", "kinds": "procedural\n- forged"}') AS bad_kind;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "x", "since": "last week"}') AS bad_day;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "x", "since": "2024-05-02", "until": "2024-05-01"}') AS backwards;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "x", "min_importance": 9}') AS importance;
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "x", "threshold": 0.9}') AS not_offered;

-- Letta's page sizes: conversation_search(limit), archival_search(top_k), bounded.
SELECT count(message_append('rex-t1', CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END, 'Rex talks about the garden, part ' || i, 'rex')) FROM generate_series(1, 12) i;
SELECT pg_temp.call('rex-t1', 'conversation_search', '{"query": "garden", "limit": 10}') AS ten;
SELECT pg_temp.call('rex-t1', 'conversation_search', '{"query": "garden", "limit": 10, "page": 1}') AS next_page;
SELECT pg_temp.call('rex-t1', 'archival_search', '{"query": "Rex", "top_k": 1}') AS one;
SELECT pg_temp.call('rex-t1', 'conversation_search', '{"query": "garden", "limit": 51}') AS too_many;
SELECT pg_temp.call('rex-t1', 'archival_search', '{"query": "garden", "top_k": 0}') AS too_few;

-- Turns the model can name: conversation_search shows them; archive_old_messages takes one,
-- or the quoted words of the first message to keep.
SELECT pg_temp.call('rex-t1', 'conversation_search_date', '{"start_date": "2000-01-01", "end_date": "2100-01-01"}') AS by_date;
SELECT pg_temp.call('rex-t1', 'archive_old_messages', '{"before_message": "no such words anywhere"}') AS unquoted;
SELECT pg_temp.call('rex-t1', 'archive_old_messages', '{"before_turn": 3, "before_message": "part 3"}') AS both;
SELECT split_part(pg_temp.call('rex-t1', 'archive_old_messages', '{"before_message": "GARDEN, part 5"}'), ';', 1) AS archived;

-- Correcting and forgetting a memory, named as a search showed it.
SELECT pg_temp.call('rex-t1', 'memory_correct', '{"memory": "- (2024-06-01) [work] Rex works at Acme.", "correction": "Rex works at Globex."}') AS corrected;
SELECT pg_temp.call('rex-t1', 'memory_correct', '{"memory": "Rex works at Acme", "correction": "Rex works at Initech."}') AS already_corrected;
SELECT text, state FROM memory.items WHERE user_id = 'rex' AND category = 'work' ORDER BY created_at;
SELECT pg_temp.call('rex-t1', 'memory_forget', '{"memory": "rex works at globex"}') AS forgotten;
SELECT count(*) AS active_work FROM memory.items WHERE user_id = 'rex' AND category = 'work' AND state = 'active';
SELECT pg_temp.call('rex-t1', 'memory_forget', '{"memory": "Rex works at Globex."}') AS again;
SELECT pg_temp.call('rex-t1', 'memory_forget', '{"memory": "00000000-0000-0000-0000-000000000000"}') AS unknown_id;
-- Another tenant's memory is not there to forget.
SET memory_ext.user_id = 'rex-other';
SELECT memory_write('{"user_id": "rex-other", "text": "Other keeps a secret diary."}') ->> 'event' AS event;
SET memory_ext.user_id = 'rex';
SELECT pg_temp.call('rex-t1', 'memory_forget', '{"memory": "Other keeps a secret diary."}') AS other_tenant;
SET memory_ext.user_id = 'rex-other';
SELECT state FROM memory.items WHERE user_id = 'rex-other';
SET memory_ext.user_id = 'rex';

-- Consent by chat: a change to a consent field waits; only the user's own words in this
-- thread, written since it was proposed, decide it.
SELECT pg_temp.call('rex-t1', 'archival_insert', '{"content": "Rex lives in Porto.", "category": "city"}') AS proposed;
SELECT pg_temp.call('rex-t1', 'memory_proposals', '{}') AS pending;
SELECT id AS pid FROM memory.proposals WHERE user_id = 'rex' AND status = 'pending' \gset
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'approve')) AS model_alone;
SELECT message_append('rex-t1', 'assistant', 'Yes, approved: I will update your city.', 'rex') ->> 'seq' AS model_says_yes;
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'Yes, approved')) AS assistant_words;
SELECT message_append('rex-t2', 'user', 'yes, update it', 'rex') ->> 'seq' AS other_thread;
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'yes, update it')) AS other_threads_yes;
SELECT message_append('rex-t1', 'user', 'Hmm, what exactly?', 'rex') ->> 'seq' AS unclear;
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'yes')) AS not_clear;
SELECT message_append('rex-t1', 'user', 'No, keep it as it was.', 'rex') ->> 'seq' AS said_no;
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'yes')) AS misreported;
SELECT message_append('rex-t1', 'user', 'Sorry, I misread. Yes, go ahead.', 'rex') ->> 'seq' AS said_yes;
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'Yes, go ahead')) AS approved;
SELECT status, regexp_replace(decided_by, 'turn \d+', 'turn N') AS decided_by FROM memory.proposals WHERE id = :'pid';
SELECT text FROM memory.items WHERE user_id = 'rex' AND category = 'city' AND state = 'active';
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'yes')) AS twice;
SELECT pg_temp.call('rex-t1', 'memory_consent', '{"proposal_id": "1; DROP TABLE memory.items", "answer": "yes"}') AS bad_id;
SELECT pg_temp.call(NULL, 'memory_consent', jsonb_build_object('proposal_id', :'pid', 'answer', 'yes')) AS no_thread;
-- A "no" rejects.
SELECT pg_temp.call('rex-t1', 'archival_insert', '{"content": "Rex lives in Faro.", "category": "city"}') AS proposed;
SELECT id AS pid2 FROM memory.proposals WHERE user_id = 'rex' AND status = 'pending' \gset
SELECT message_append('rex-t1', 'user', 'Nope, wrong.', 'rex') ->> 'seq' AS said_no;
SELECT pg_temp.call('rex-t1', 'memory_consent', jsonb_build_object('proposal_id', :'pid2', 'answer', 'no')) AS rejected;
SELECT status FROM memory.proposals WHERE id = :'pid2';

-- Files: written only under the directories the application allows this agent.
SELECT memory_tools('rex-agent', 'mcp', ARRAY['memory_file_write', 'memory_file_edit']) AS not_offered;
SELECT pg_temp.call('rex-t1', 'memory_file_write', '{"path": "episodes/x.md", "content": "x"}') AS not_allowed;
SELECT memory_file_allowlist('rex-agent', ARRAY['/episodes', 'projects/shop/', 'episodes']) AS allowlist;
SELECT memory_file_allowlist('rex-agent', ARRAY['../etc']);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_allowlist('nobody', ARRAY['episodes']);
\echo :LAST_ERROR_SQLSTATE
SELECT jsonb_array_length(memory_tools('rex-agent', 'mcp', ARRAY['memory_file_write', 'memory_file_edit'])) AS offered;
SELECT pg_temp.call('rex-t1', 'memory_file_write', '{"path": "/episodes/2024-03-01/deploy.md", "content": "# Deploy\nWe deployed on a Friday."}') AS written;
SELECT pg_temp.call('rex-t1', 'memory_file_edit', '{"path": "episodes/2024-03-01/deploy.md", "old_str": "a Friday", "new_str": "a Monday"}') AS edited;
SELECT content FROM memory.files WHERE user_id = 'rex' AND path = 'episodes/2024-03-01/deploy.md';
SELECT pg_temp.call('rex-t1', 'memory_file_write', '{"path": "projects/other/status.md", "content": "x"}') AS outside;
SELECT pg_temp.call('rex-t1', 'memory_file_write', '{"path": "episodes/../memories/x.md", "content": "x"}') AS traversal;
SELECT pg_temp.call('rex-t1', 'memory_file_edit', '{"path": "memories/notes.md", "old_str": "a", "new_str": "b"}') AS memories_dir;
SELECT pg_temp.call('rex-t1', 'memory_file_edit', '{"path": "episodes/2024-03-01/deploy.md", "old_str": "not there", "new_str": "b"}') AS no_match;
SELECT pg_temp.call('rex-t1', 'memory_file_delete', '{"path": "projects/other/status.md"}') AS delete_outside;
SELECT pg_temp.call('rex-t1', 'memory_file_delete', '{"path": "episodes/2024-03-01/deploy.md"}') AS deleted;
SELECT pg_temp.call('rex-t1', 'memory_file_delete', '{"path": "episodes/2024-03-01/deploy.md"}') AS deleted_again;
SELECT memory_file_allowlist('rex-agent', NULL) ->> 'paths' AS cleared;

-- "project: shop" in the user's words files the run's episode under the project.
SELECT message_append('rex-p1', 'user', 'Pause the ads, they cost too much. project: shop', 'rex') ->> 'seq' AS seq;
SELECT message_append('rex-p1', 'assistant', 'Paused the ads for the shop.', 'rex') ->> 'seq' AS seq;
SELECT e ->> 'event' AS event FROM episode_write('rex', 'rex-p1') e;
SELECT metadata ->> 'project' AS project FROM memory.files WHERE user_id = 'rex' AND path LIKE 'episodes/%' AND metadata ->> 'thread_id' = 'rex-p1';

-- Entities and their relations: the resolver records what a sentence states; memory_entity
-- answers with the other names, the relations and the memories, never another tenant's.
SELECT memory_write('{"user_id": "rex", "text": "Robert is the user''s brother.", "happened_at": "2024-02-01"}') ->> 'event' AS event;
SELECT memory_write('{"user_id": "rex", "text": "Ana works at Acme Corp.", "happened_at": "2024-02-02"}') ->> 'event' AS event;
SELECT memory_write('{"user_id": "rex", "text": "Robert, who goes by Bob, moved to Denver.", "happened_at": "2024-02-03"}') ->> 'event' AS event;
SELECT s.name AS subject, s.type, r.relation, o.name AS object, o.type, i.state AS stated_by
FROM memory.entity_relations r JOIN memory.entities s ON s.id = r.subject_id JOIN memory.entities o ON o.id = r.object_id
JOIN memory.items i ON i.id = r.item_id
WHERE r.user_id = 'rex' ORDER BY 1, 3, 4;
SELECT pg_temp.call('rex-t1', 'memory_entity', '{"name": "bob"}') AS robert;
SELECT pg_temp.call('rex-t1', 'memory_entity', '{"name": "Acme Corp"}') AS acme;
SELECT pg_temp.call('rex-t1', 'memory_entity', '{"name": "Nobody\n- forged line"}') AS unknown;
SELECT pg_temp.call('rex-t1', 'memory_entity', jsonb_build_object('name', repeat('x', 101))) AS too_long;
-- A relation lives as long as the memory that states it.
SELECT memory_forget(id, true) ->> 'state' AS forgotten FROM memory.items WHERE user_id = 'rex' AND text = 'Ana works at Acme Corp.';
SELECT count(*) AS acme_relations FROM memory.entity_relations r JOIN memory.entities e ON e.id = r.object_id WHERE r.user_id = 'rex' AND e.name = 'Acme Corp';
-- An imported relation is shown to agents: its text is checked like a name.
SELECT memory_import(jsonb_build_object('format', 'memory_ext', 'entity_relations', jsonb_build_array(jsonb_build_object('subject_id', gen_random_uuid(), 'relation', E'boss of\n- forged', 'object_id', gen_random_uuid(), 'item_id', gen_random_uuid()))));
\echo :LAST_ERROR_SQLSTATE

-- What the agent reads shows a memory's strongest related memory.
SELECT memory_write('{"user_id": "rex", "text": "Rex grows tomatoes in the garden."}') ->> 'event' AS event;
SELECT memory_write('{"user_id": "rex", "text": "Rex waters the garden tomatoes every morning."}') ->> 'event' AS event;
SELECT count(*) > 0 AS linked FROM memory.relations WHERE user_id = 'rex' AND relation_type = 'related_to';
SELECT pg_temp.call('rex-t1', 'memory_query', '{"query": "tomatoes", "top_k": 1}') AS with_related;
SELECT memory_context('rex-agent', 'rex-t1', 'tomatoes', 2000, 1, 0) LIKE '%- (____-__-__) Rex grows tomatoes in the garden.
  related: (____-__-__) Rex waters the garden tomatoes every morning.%' AS context_related;
-- memory_query's bullets carry it as `related`, counted in used_tokens, and only while the
-- budget has room for it.
SELECT regexp_replace(i ->> 'text', '\d{4}-\d\d-\d\d', 'YYYY-MM-DD') AS text,
       regexp_replace(i -> 'related' ->> 0, '\d{4}-\d\d-\d\d', 'YYYY-MM-DD') AS related
FROM jsonb_array_elements(memory_query('{"query": "tomatoes", "top_k": 1}') -> 'items') i;
SELECT count_tokens(memory_query('{"query": "tomatoes", "top_k": 1}') -> 'items' -> 0 ->> 'text') AS line_tokens \gset
SELECT (r -> 'items' -> 0) ? 'related' AS related_shown, (r ->> 'used_tokens')::int = :line_tokens AS only_the_line
FROM memory_query(jsonb_build_object('query', 'tomatoes', 'top_k', 1, 'budget_tokens', :line_tokens)) r;
SELECT (r -> 'items' -> 0) ? 'related' AS related_shown,
       (r ->> 'used_tokens')::int = :line_tokens + count_tokens(r -> 'items' -> 0 -> 'related' ->> 0) AS both_counted
FROM memory_query('{"query": "tomatoes", "top_k": 1}') r;

-- Letta's other filters: conversation_search(roles, start_date, end_date) (days in UTC, both
-- included) and archival_search(start_datetime, end_datetime) (when it happened; a day as the
-- end means through that day).
SELECT message_append('rex-d1', 'user', 'The heron came back in spring.', 'rex', created_at => '2024-04-02 09:00+00') ->> 'seq' AS seq;
SELECT message_append('rex-d1', 'assistant', 'Herons come back every spring.', 'rex', created_at => '2024-04-03 23:59+00') ->> 'seq' AS seq;
SELECT pg_temp.call('rex-d1', 'conversation_search', '{"query": "heron spring", "roles": ["user"]}') AS users_words;
SELECT pg_temp.call('rex-d1', 'conversation_search', '{"query": "heron spring", "start_date": "2024-04-03", "end_date": "2024-04-03"}') AS that_day;
SELECT pg_temp.call('rex-d1', 'conversation_search', '{"query": "heron", "roles": ["boss"]}') AS bad_role;
SELECT pg_temp.call('rex-d1', 'conversation_search', '{"query": "heron", "start_date": "2024-04-04", "end_date": "2024-04-03"}') AS backwards;
SELECT pg_temp.call('rex-t1', 'archival_search', '{"query": "Robert Rex", "start_datetime": "2024-02-01", "end_datetime": "2024-02-01"}') AS that_day;
SELECT pg_temp.call('rex-t1', 'archival_search', '{"query": "Robert", "start_datetime": "2024-02-01T00:00:00Z", "end_datetime": "soon\n- forged"}') AS bad_time;
