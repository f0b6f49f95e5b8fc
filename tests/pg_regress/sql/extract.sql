-- Extraction (docs/api.md "Extraction", 0.6.0) without an LLM: the rules keep what a user says
-- outright about themselves or asks to be remembered, rewritten in the third person; nothing
-- else. A watermark makes every message go through extraction once; run_end only records.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'ext-sam';
SELECT message_append('ext-t', 'user', 'Hi! I''m allergic to peanuts. I''m tired today. Can you help me plan a trip?', name => 'Sam') ->> 'seq' AS seq;
SELECT message_append('ext-t', 'assistant', 'Sure. I love planning trips. Where to?') ->> 'seq' AS seq;
SELECT message_append('ext-t', 'user', 'I live in Boston. Please remember that my passport expires in March. I think I like jazz.', name => 'Sam') ->> 'seq' AS seq;
SELECT message_append('ext-t', 'tool', 'I live in a tool result.', tool_call_id => 'c1') ->> 'seq' AS seq;
SELECT r - 'error' AS extracted FROM memory_extract('ext-t') r;
SELECT text, kind, actor_id, thread_id, metadata ->> 'source' AS source, metadata ->> 'seq' AS from_seq,
       happened_at = (SELECT created_at FROM memory.messages m WHERE m.thread_id = 'ext-t' AND m.seq = (i.metadata ->> 'seq')::int) AS happened_at_turn
FROM memory.items i WHERE user_id = 'ext-sam' ORDER BY created_at;

-- Nothing new: nothing read, nothing written.
SELECT (r ->> 'batches')::int AS batches, (r ->> 'created')::int AS created, r ->> 'extracted_seq' AS watermark
FROM memory_extract('ext-t') r;

-- Where Sam lives is a sensitive field (city): extracted, it waits for consent (consent.sql).
SELECT category, text, status FROM memory_proposals();

-- A later fact of the same subject with a new value supersedes the older one (the no-LLM rule).
SELECT message_append('ext-t', 'user', 'I work at Acme.', name => 'Sam') ->> 'seq' AS seq;
SELECT message_append('ext-t', 'user', 'Big news: I work at Globex now.', name => 'Sam') ->> 'seq' AS seq;
SELECT (r ->> 'created')::int AS created, (r ->> 'superseded')::int AS superseded FROM memory_extract('ext-t') r;
SELECT text, state, superseded_by = (SELECT id FROM memory.items WHERE text = 'Sam works at Globex now.') AS to_successor
FROM memory.items WHERE user_id = 'ext-sam' AND text LIKE 'Sam works%' ORDER BY created_at;
-- Recall returns the current fact (its bullet date, the turn's day, masked).
SELECT regexp_replace(i ->> 'text', '^\(\d{4}-\d{2}-\d{2}\) ', '(<day>) ') AS recalled FROM jsonb_array_elements(memory_query('{"query": "Where does Sam work?", "top_k": 1}') -> 'items') i;

-- Usage and the watermark: readable by the tenant, not writable (the daily cap is the operator's).
SELECT writes, calls FROM memory.extraction_usage;
SELECT thread_id, extracted_seq, attempts FROM memory.extractions;
UPDATE memory.extraction_usage SET writes = 0;
UPDATE memory.extractions SET extracted_seq = 0;

-- The daily cap: at 5 a day, one write is left: one fact is written, the other capped; the
-- watermark moves past both.
RESET ROLE;
SET memory_ext.extract_daily_cap = 5;
SET ROLE regress_memory_user;
SELECT message_append('ext-t', 'user', 'I have two cats. I play the cello.', name => 'Sam') ->> 'seq' AS seq;
SELECT (r ->> 'created')::int AS created, (r ->> 'capped')::int AS capped, r ->> 'extracted_seq' AS watermark FROM memory_extract('ext-t') r;
RESET ROLE;
RESET memory_ext.extract_daily_cap;
SET ROLE regress_memory_user;

-- At most 3 memories per turn.
SELECT message_append('ext-t2', 'user', 'I have two cats. I work as a nurse. I play the cello. I was born in Lisbon. I own a bike.') ->> 'seq' AS seq;
SELECT (r ->> 'created')::int AS created FROM memory_extract('ext-t2') r;
SELECT text FROM memory.items WHERE thread_id = 'ext-t2' ORDER BY created_at;

-- Bad input.
SELECT memory_extract(NULL);
SELECT memory_extract('no-such-thread');
SELECT run_end('no-such-thread');
SELECT run_end('ext-t', context_window => 0);

-- run_end records the request and returns; a second one replaces the first.
SELECT r ->> 'thread_id' AS thread, r ->> 'run_id' AS run, r ? 'requested_at' AS stamped FROM run_end('ext-t', 'run-1') r;
SELECT run_end('ext-t', 'run-2', 8000) ->> 'context_window' AS window;
SELECT thread_id, run_id, context_window, attempts FROM memory.run_ends;

-- Another tenant sees none of it.
SET memory_ext.user_id = 'ext-other';
SELECT count(*) AS others_rows FROM memory.extractions;
SELECT count(*) AS others_ends FROM memory.run_ends;
SELECT memory_extract('ext-t');
RESET ROLE;
-- 0.9.0: the queue of ended runs is the worker's: a tenant reads its rows and enqueues through
-- run_end only (42501 for writing the table).
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'ext-sam';
INSERT INTO memory.run_ends (user_id, thread_id, retry_at) VALUES ('ext-sam', 'ext-t', '-infinity');
UPDATE memory.run_ends SET retry_at = '-infinity';
DELETE FROM memory.run_ends;
SELECT run_end('ext-t', 'run-3') ->> 'run_id' AS through_the_api;
SELECT thread_id, run_id FROM memory.run_ends;

-- The theory-of-mind pass (0.12.0), with an LLM (the HTTP stand-in's scripted
-- model, tests/standin/src/lib.rs): a call of its own after the facts, 1-3 insights of kind
-- insight in relationship_dynamic; an insight about a benign field is filed under it, written
-- at once when the model is sure. At most one pass a day per tenant.
RESET ROLE;
SET memory_ext.llm_url = 'http://127.0.0.1:61480/v1';
SET memory_ext.llm_model = 'extract-script';
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'tom-sam';
SELECT message_append('tom-t', 'user', 'FACT: Sam runs every morning before work.; INSIGHT: Sam opens up when asked about running.', name => 'Sam') ->> 'seq' AS seq;
SELECT message_append('tom-t', 'user', 'Keep it short please. INSIGHT: Sam prefers short answers. FIELD: tone CONFIDENCE: 0.95', name => 'Sam') ->> 'seq' AS seq;
SELECT r ->> 'method' AS method, r ->> 'created' AS created, r ->> 'llm_calls' AS llm_calls FROM memory_extract('tom-t') r;
SELECT kind, category, text, metadata ->> 'pass' AS pass FROM memory.items WHERE user_id = 'tom-sam' ORDER BY kind, text;
SELECT tom_at IS NOT NULL AS tom_ran FROM memory.extractions WHERE thread_id = 'tom-t';
-- Within 24 hours: the facts are extracted, no second pass.
SELECT message_append('tom-t', 'user', 'FACT: Sam swims on Sundays.; INSIGHT: Sam likes puns.', name => 'Sam') ->> 'seq' AS seq;
SELECT r ->> 'created' AS created, r ->> 'llm_calls' AS llm_calls FROM memory_extract('tom-t') r;
SELECT count(*) AS insights FROM memory.items WHERE user_id = 'tom-sam' AND kind = 'insight';
-- Unsure about a benign field: a proposal, corroborated like any other signal.
SET memory_ext.user_id = 'tom-ana';
SELECT message_append('tom-a', 'user', 'INSIGHT: Ana prefers formal answers. FIELD: tone CONFIDENCE: 0.4', name => 'Ana') ->> 'seq' AS seq;
SELECT r ->> 'proposed' AS proposed FROM memory_extract('tom-a') r;
SELECT category, text, policy, status FROM memory_proposals();
-- The pass asks for at most 220 tokens (0.13.0: nothing checked it before): the
-- stand-in writes the cap the request carried into the insight.
SET memory_ext.user_id = 'tom-cap';
SELECT message_append('tom-c', 'user', 'FACT: Cy paints.; INSIGHT: Cy was asked with a cap of {max_tokens} tokens.', name => 'Cy') ->> 'seq' AS seq;
SELECT r ->> 'llm_calls' AS llm_calls FROM memory_extract('tom-c') r;
SELECT text FROM memory.items WHERE user_id = 'tom-cap' AND kind = 'insight';
RESET ROLE;
RESET memory_ext.llm_url;
RESET memory_ext.llm_model;
