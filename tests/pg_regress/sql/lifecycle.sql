-- Lifecycle: memory_forget / memory_restore / memory_ttl_sweep / memory_purge (time travel by
-- moving clocks back), and memory_consolidate without an LLM (its deterministic rule). Every
-- transition shows once in the thread's delta header and leaves history. Ids are masked.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'lena';
CREATE FUNCTION pg_temp.masked(j jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT regexp_replace(regexp_replace(j::text, '"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"', '"<id>"', 'g'),
                          '"purge_at": "[^"]*"', '"purge_at": "<time>"', 'g')::jsonb
$$;
CREATE FUNCTION pg_temp.id(t text) RETURNS uuid LANGUAGE sql AS $$
    SELECT id FROM memory.items WHERE text = t
$$;
-- A 384-d unit vector at angle acos(c) from the first axis, towards axis k (k = 0: the axis).
CREATE FUNCTION pg_temp.v(c float8, k int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_agg(CASE WHEN i = 0 THEN c WHEN i = k AND k > 0 THEN sqrt(1 - c * c) ELSE 0 END ORDER BY i)
    FROM generate_series(0, 383) i
$$;

SELECT memory_write('{"text": "Lena keeps a sourdough starter called Bubbles.", "thread_id": "l1", "importance": 2}') IS NOT NULL AS ok;
SELECT memory_write('{"text": "Lena is training for the Berlin marathon.", "thread_id": "l1", "importance": 2, "pinned": true}') IS NOT NULL AS ok;
SELECT memory_write('{"text": "Lena is allergic to penicillin.", "thread_id": "l1", "importance": 5}') IS NOT NULL AS ok;
SELECT memory_write('{"text": "Lena bought a blue umbrella.", "thread_id": "l1", "importance": 1}') IS NOT NULL AS ok;
SELECT memory_delta('l1', 0) <> '' AS header_before;
SELECT (memory_query('{"query": "anything", "thread_id": "l1"}')->>'revision')::int AS rev;

-- Forget: soft-deleted at once, out of retrieval, a "-deleted" bullet once; again = noop.
SELECT pg_temp.masked(memory_forget(pg_temp.id('Lena bought a blue umbrella.')));
SELECT pg_temp.masked(memory_forget(pg_temp.id('Lena bought a blue umbrella.')));
SELECT state, purge_at > now() + interval '29 days' AS purge_in_30_days FROM memory.items WHERE text = 'Lena bought a blue umbrella.';
SELECT count(*) AS returned FROM jsonb_array_elements(memory_query('{"query": "blue umbrella", "top_k": 10}')->'items') i
WHERE i->>'text' LIKE '%umbrella%';
SELECT memory_query('{"query": "umbrella", "thread_id": "l1"}')->>'header' AS header;
SELECT memory_query('{"query": "umbrella", "thread_id": "l1"}')->>'header' AS header_again;
-- Restore: active and retrievable again, a "restored" bullet.
SELECT pg_temp.masked(memory_restore(pg_temp.id('Lena bought a blue umbrella.')));
SELECT state, purge_at FROM memory.items WHERE text = 'Lena bought a blue umbrella.';
SELECT memory_query('{"query": "umbrella", "thread_id": "l1"}')->>'header' AS header;
SELECT count(*) AS returned FROM jsonb_array_elements(memory_query('{"query": "blue umbrella", "top_k": 10}')->'items') i
WHERE i->>'text' LIKE '%umbrella%';

-- TTL: everything unread for 61 days. Pinned and important memories survive.
UPDATE memory.items SET last_accessed_at = now() - interval '61 days';
SELECT memory_ttl_sweep() AS expired;
SELECT text, state FROM memory.items ORDER BY text;
SELECT memory_query('{"query": "x", "thread_id": "l1"}')->>'header' AS header;
SELECT memory_ttl_sweep() AS expired_again;

-- Purge: only past purge_at; history keeps the event but not the text (tests/pg_regress/sql/erase.sql),
-- the thread gets no new bullet.
SELECT memory_purge() AS purged_too_early;
CREATE TEMP TABLE umbrella AS SELECT id::text AS id FROM memory.items WHERE text = 'Lena bought a blue umbrella.';
UPDATE memory.items SET purge_at = now() - interval '1 second' WHERE text = 'Lena bought a blue umbrella.';
SELECT memory_purge() AS purged;
SELECT text FROM memory.items ORDER BY text;
SELECT event, old_ref IS NULL AND new_ref IS NULL AS text_gone FROM memory.history
WHERE memory_id = (SELECT id FROM umbrella) ORDER BY ts DESC LIMIT 1;
SELECT memory_query('{"query": "x", "thread_id": "l1"}')->>'header' AS header_after_purge;

-- Errors: unknown id P0002, NULL 22004; nothing changes.
SELECT memory_forget('00000000-0000-0000-0000-000000000000');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_restore(NULL);
\echo :LAST_ERROR_SQLSTATE

-- Consolidation without an LLM. Vectors are supplied so that the cosines are known; write-time
-- linking is off so that the pass's own links show.
SET memory_ext.link_threshold = 0.99;
SELECT memory_write(jsonb_build_object('text', 'Lena likes green tea.', 'thread_id', 'l2', 'importance', 2, 'tags', '["a"]'::jsonb, 'embedding', pg_temp.v(1, 0))) IS NOT NULL AS ok;
SELECT memory_write(jsonb_build_object('text', 'Lena really likes green tea.', 'thread_id', 'l2', 'importance', 4, 'tags', '["b"]'::jsonb, 'embedding', pg_temp.v(0.9, 1))) IS NOT NULL AS ok;
SELECT memory_write(jsonb_build_object('text', 'Lena''s budget for Porto is 500 euros.', 'thread_id', 'l2', 'embedding', pg_temp.v(0.3, 2))) IS NOT NULL AS ok;
SELECT memory_write(jsonb_build_object('text', 'Lena''s budget for Porto is 650 euros.', 'thread_id', 'l2',
       'embedding', (SELECT jsonb_agg(CASE WHEN i = 0 THEN 0.3 WHEN i = 2 THEN 0.9 * sqrt(0.91) WHEN i = 3 THEN sqrt(0.91 - 0.81 * 0.91) ELSE 0 END ORDER BY i) FROM generate_series(0, 383) i))) IS NOT NULL AS ok;
RESET memory_ext.link_threshold;
SELECT memory_query('{"query": "x", "thread_id": "l2"}')->>'revision' AS rev;
SELECT memory_consolidate();
-- The less important of the tea pair went, into the survivor (tags merged); the budgets differ
-- in a number, so they are linked, not merged.
SELECT text, state, importance, tags FROM memory.items WHERE thread_id = 'l2' ORDER BY text;
SELECT r.relation_type, least(a.text, b.text) AS one, greatest(a.text, b.text) AS other
FROM memory.relations r JOIN memory.items a ON a.id = r.from_id JOIN memory.items b ON b.id = r.to_id
WHERE r.relation_type = 'related_to' ORDER BY 2;
SELECT event, meta->>'reason' AS reason, (meta->>'merged_into')::uuid = pg_temp.id('Lena really likes green tea.') AS into_survivor
FROM memory.history WHERE memory_id = pg_temp.id('Lena likes green tea.')::text ORDER BY ts DESC LIMIT 1;
SELECT memory_query('{"query": "x", "thread_id": "l2"}')->>'header' AS header;
-- A second run re-checks nothing (fingerprints).
SELECT memory_consolidate();
-- The merge is undone by restoring the loser.
SELECT pg_temp.masked(memory_restore(pg_temp.id('Lena likes green tea.')))->>'event' AS event;
SELECT memory_consolidate(max_pairs => -1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
