-- memory_query as a user reads it: bullets dated by when each memory happened, the obvious
-- answer first among facts of one thread, the time a query names, explain, and why a result is
-- empty (docs/api.md "memory_query"). Vectors come from the built-in model (deterministic).
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'sam';

-- Nothing written yet: no items, and the response says why.
SELECT memory_query('{"query": "where does Sam live now?"}') - 'revision' AS empty;

-- Four facts written one after the other to one thread (docs/retrieval.md "Neighbours").
SELECT memory_write('{"text": "Sam is allergic to peanuts.", "category": "health", "thread_id": "s1", "happened_at": "2023-05-08T10:00:00Z"}') ->> 'event' AS e1;
SELECT memory_write('{"text": "Sam works as a nurse at the city hospital.", "category": "work", "thread_id": "s1", "happened_at": "2023-06-01T10:00:00Z"}') ->> 'event' AS e2;
SELECT memory_write('{"text": "Sam has a dog named Biscuit.", "thread_id": "s1", "happened_at": "2023-06-20T10:00:00Z"}') ->> 'event' AS e3;
SELECT memory_write('{"text": "Sam moved from Boston to Denver in 2024.", "category": "home", "thread_id": "s1", "happened_at": "2024-03-15T10:00:00Z"}') ->> 'event' AS e4;

-- Bullets: "(day it happened) [category] text"; the clear best match first.
SELECT i->>'text' AS bullet FROM jsonb_array_elements(memory_query('{"query": "where does Sam live now?", "top_k": 2}')->'items') i;
SELECT (memory_query('{"query": "where does Sam live now?", "top_k": 2}')) - 'items' - 'revision' AS rest;

-- A query that names a time prefers the memories of that time; relative times are read
-- against reference_time (now when absent).
SELECT i->>'text' AS bullet FROM jsonb_array_elements(memory_query('{"query": "what about Sam in June 2023?", "top_k": 2}')->'items') i;
SELECT r->'explain' AS explain, r->'items'->0->>'text' AS first
FROM memory_query('{"query": "what did Sam tell us last May?", "top_k": 1, "explain": true, "reference_time": "2023-08-01T00:00:00Z"}') r;

-- explain: each item's signals add up to its score, and it says which side found it.
SELECT i->>'text' AS bullet, i->'explain'->>'pool' AS pool,
       abs((i->'explain'->>'score')::float8 - (SELECT sum(value::float8) FROM jsonb_each_text(i->'explain'->'signals'))) < 1e-9 AS adds_up,
       (SELECT string_agg(key, ',' ORDER BY key) FROM jsonb_each(i->'explain'->'signals')) AS signals
FROM jsonb_array_elements(memory_query('{"query": "Biscuit", "top_k": 2, "explain": true}')->'items') i;

-- rerank: the built-in cross-encoder reads the best memories; its share is the rerank signal,
-- and the sum still holds. The depth bounds how many it reads.
SET memory_ext.rerank_depth = 2;
SELECT i->>'text' AS bullet, (i->'explain'->'signals'->>'rerank')::float8 > 0 AS reranked,
       abs((i->'explain'->>'score')::float8 - (SELECT sum(value::float8) FROM jsonb_each_text(i->'explain'->'signals'))) < 1e-9 AS adds_up
FROM jsonb_array_elements(memory_query('{"query": "where does Sam live now?", "top_k": 3, "explain": true, "rerank": true}')->'items') i;
RESET memory_ext.rerank_depth;
SELECT memory_query('{"query": "peanuts", "rerank": 1}');
\echo :LAST_ERROR_SQLSTATE

-- Empty results say why: nothing matched, or all below the threshold, or over the budget.
SELECT memory_query('{"query": "peanuts", "filters": {"category": "nope"}}') ->> 'empty_reason' AS filtered;
SELECT memory_query('{"query": "peanuts", "threshold": 0.99}') ->> 'empty_reason' AS threshold;
SELECT memory_query('{"query": "peanuts", "budget_tokens": 1}') ->> 'empty_reason' AS budget;
SELECT memory_query('{"query": "peanuts", "explain": "yes"}');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query('{"query": "peanuts", "reference_time": "last week"}');
\echo :LAST_ERROR_SQLSTATE

-- memory_search returns when each memory happened.
SELECT text, happened_at AT TIME ZONE 'UTC' AS happened_at FROM memory_search('Denver', top_k => 1);

-- Memories written without a thread follow the previous thread-less one of the same sitting
-- (event times within an hour); a later sitting starts afresh.
SET memory_ext.user_id = 'bare';
SELECT memory_write('{"text": "Jo: I finally booked the trip.", "kind": "archival", "happened_at": "2023-05-08T10:00:00Z"}') ->> 'event' AS t1;
SELECT memory_write('{"text": "Ana: Where are you going?", "kind": "archival", "happened_at": "2023-05-08T10:00:00Z"}') ->> 'event' AS t2;
SELECT memory_write('{"text": "Jo: Lisbon, in June.", "kind": "archival", "happened_at": "2023-05-08T10:00:00Z"}') ->> 'event' AS t3;
SELECT memory_write('{"text": "Jo: Back from the dentist.", "kind": "archival", "happened_at": "2023-07-01T09:00:00Z"}') ->> 'event' AS t4;
SELECT a.text AS memory, b.text AS follows
FROM memory.relations r JOIN memory.items a ON a.id = r.from_id JOIN memory.items b ON b.id = r.to_id
WHERE r.relation_type = 'follows' ORDER BY a.created_at;
