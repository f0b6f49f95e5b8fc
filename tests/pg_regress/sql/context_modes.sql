-- What recall includes by default (0.5.0, docs/api.md "Kinds in recall" and "Context modes"):
-- procedural memories only when asked for by kind; categories in context 'all' in every
-- memory_context, whatever the query, within their rag_length and the budget.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'cm-user';
SELECT memory_agent('cm-agent', 'cm-user', 'I help.', 'Name: Cleo') ->> 'created' AS created;
SELECT memory_configure('{"categories": {"system": [{"name": "profile", "context": "all", "rag_length": 2},
                                                    {"name": "travel", "context": "rag"}], "custom": []}}') IS NOT NULL AS configured;
SELECT count(memory_write(w)) AS written FROM jsonb_array_elements('[
  {"text": "Cleo is vegetarian.", "category": "profile", "importance": 4, "happened_at": "2024-01-02"},
  {"text": "Cleo speaks Portuguese and English.", "category": "profile", "importance": 3, "happened_at": "2024-01-03"},
  {"text": "Cleo was born in Porto.", "category": "profile", "importance": 2, "happened_at": "2024-01-04"},
  {"text": "Cleo flew to Tokyo in March.", "category": "travel", "happened_at": "2024-03-10"},
  {"text": "To deploy: 1. run the tests 2. tag the release 3. push the tag.", "kind": "procedural", "category": "travel", "happened_at": "2024-03-11"}
]'::jsonb) w;

-- Procedural memories stay out of recall unless a kind asks for them.
SELECT i ->> 'text' AS default_recall FROM jsonb_array_elements(memory_query('{"query": "how do I deploy the release?", "top_k": 5}') -> 'items') i
WHERE i ->> 'text' LIKE '%deploy%';
SELECT i ->> 'text' AS asked_by_kinds FROM jsonb_array_elements(memory_query('{"query": "how do I deploy the release?", "top_k": 1, "kinds": ["procedural"]}') -> 'items') i;
SELECT i ->> 'text' AS asked_by_kind FROM jsonb_array_elements(memory_query('{"query": "how do I deploy the release?", "top_k": 1, "filters": {"kind": "procedural"}}') -> 'items') i;
SELECT text AS searched FROM memory_search('deploy the release', filters => '{"kinds": ["procedural", "semantic"]}') LIMIT 1;
SELECT count(*) AS not_searched FROM memory_search('deploy the release') WHERE kind = 'procedural';
SELECT memory_query('{"query": "x", "kinds": ["dream"]}');

-- The profile (context all) is in every memory_context: its two most important memories first,
-- whatever the query; the query's own recall follows, each memory once.
SELECT substring(memory_context('cm-agent', 'cm-thread', 'What did Cleo do in March?', 2000) FROM '\[MEMORY CONTEXT\].*') AS memories;
SELECT memory_context('cm-agent', 'cm-thread', 'vegetarian', 2000) LIKE '%vegetarian%vegetarian%' AS listed_twice;
-- A tight budget lets the recalled memories go first (lowest-ranked first), then the profile's.
SELECT count_tokens(memory_context('cm-agent', 'cm-thread', 'What did Cleo do in March?', 2000)) AS full_tokens \gset
SELECT substring(memory_context('cm-agent', 'cm-thread', 'What did Cleo do in March?', :full_tokens - 1) FROM '\[MEMORY CONTEXT\].*') AS one_token_less;
SELECT substring(memory_context('cm-agent', 'cm-thread', 'What did Cleo do in March?', :full_tokens - 20) FROM '\[MEMORY CONTEXT\].*') AS twenty_less;
SELECT substring(memory_context('cm-agent', 'cm-thread', 'What did Cleo do in March?', :full_tokens - 40) FROM '\[MEMORY CONTEXT\].*') AS forty_less;
