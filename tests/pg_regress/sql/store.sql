-- The store (docs/api.md "Store"): LangGraph's BaseStore in SQL. Namespaces are arrays (labels
-- hold dots, % and _ as text); values come back as written; search by filter and by cosine
-- similarity (absolute scores); TTL; namespaces by prefix, suffix and depth; batch; history;
-- tenants apart.
\set SHOW_CONTEXT never
SET memory_ext.user_id = 'store-ann';
SELECT r ->> 'event' AS event, r ->> 'indexed' AS indexed
FROM store_put('{docs,public}', 'doc1', '{"title": "Tea notes", "body": "Green tea at 80 degrees.", "n": 3}') r;
SELECT store_get('{docs,public}', 'doc1') -> 'value' AS value;
SELECT r ->> 'event' AS event FROM store_put('{docs,public}', 'doc1', '{"title": "Tea notes", "body": "Oolong at 90 degrees.", "n": 4}') r;
SELECT (g ->> 'updated_at')::timestamptz > (g ->> 'created_at')::timestamptz AS updated_later, g -> 'value' ->> 'body' AS body
FROM store_get('{docs,public}', 'doc1') g;
SELECT store_get('{docs,private}', 'doc1') IS NULL AS other_namespace_empty;
-- Labels are text, never patterns.
SELECT count(*) FROM (SELECT store_put(ns, 'k', '{"v": 1}', index => 'false')
                      FROM (VALUES ('{user_1}'::text[]), ('{user_1,child}'), ('{userX1}'), ('{a%b}'), ('{axxb}'),
                                   ('{foo}'), ('{foobar}'), (ARRAY[E'alice\n'])) t(ns)) x;
SELECT namespace FROM store_search('{user_1}', "limit" => 100) ORDER BY 1;
SELECT namespace FROM store_search('{a%b}', "limit" => 100) ORDER BY 1;
SELECT namespace FROM store_search('{foo}', "limit" => 100) ORDER BY 1;
SELECT namespace FROM store_search('{fo}', "limit" => 100);
-- Filters.
SELECT count(*) FROM (SELECT store_put('{cars}', k, v, index => '["text"]') FROM (VALUES
    ('doc1', '{"text": "red apple", "color": "red", "score": 4.5}'::jsonb),
    ('doc2', '{"text": "red car", "color": "red", "score": 3.0}'),
    ('doc3', '{"text": "green apple", "color": "green", "score": 4.0}'),
    ('doc4', '{"text": "blue car", "color": "blue", "score": 3.5}')) t(k, v)) x;
SELECT key FROM store_search('{cars}', filter => '{"color": "red"}') ORDER BY key;
SELECT key FROM store_search('{cars}', filter => '{"score": {"$gt": 3.2}}') ORDER BY key;
SELECT key FROM store_search('{cars}', filter => '{"score": {"$gte": 4.0}, "color": "green"}');
SELECT key FROM store_search('{cars}', filter => '{"color": {"$ne": "red"}}') ORDER BY key;
SELECT store_search('{cars}', filter => '{"color": {"$regex": "r"}}');
-- Semantic search: the built-in model's cosine similarity, best first, the same score every call.
SELECT key, round(score::numeric, 2) > 0.5 AS close FROM store_search('{cars}', query => 'a red apple', "limit" => 2);
SELECT (SELECT score FROM store_search('{cars}', query => 'blue car', "limit" => 1)) =
       (SELECT score FROM store_search('{cars}', query => 'blue car', "limit" => 1)) AS stable;
SELECT key FROM store_search('{cars}', query => 'apple', filter => '{"color": "red"}');
-- The caller's own vectors (the packages' embed): compared only with a query vector of theirs.
SELECT store_put('{vec}', 'a', '{"t": "x"}', embeddings => '{"t": [1, 0, 0]}') ->> 'indexed' AS indexed;
SELECT store_put('{vec}', 'b', '{"t": "y"}', embeddings => '{"t": [0, 1, 0]}') ->> 'indexed' AS indexed;
SELECT key, round(score::numeric, 3) AS score FROM store_search('{vec}', query_embedding => '{1, 1, 0}') ORDER BY key;
SELECT key, score FROM store_search('{vec}', query_embedding => '{0, 0, 1}') ORDER BY key;
SELECT store_put('{vec}', 'c', '{}', embeddings => '{"t": [1, "x"]}');
-- Not indexed: found by filter, never by similarity.
SELECT store_put('{cars}', 'doc5', '{"text": "red apple"}', index => 'false') ->> 'indexed' AS indexed;
SELECT key, score IS NULL AS unscored FROM store_search('{cars}', query => 'red apple', "limit" => 10) WHERE key IN ('doc1', 'doc5');
-- Namespaces.
SELECT store_list_namespaces() AS ns ORDER BY 1;
SELECT store_list_namespaces(prefix => '{docs}') AS ns;
SELECT store_list_namespaces(suffix => '{child}') AS ns;
SELECT store_list_namespaces(prefix => '{*,child}') AS ns;
SELECT store_list_namespaces(max_depth => 1, "limit" => 3) AS ns;
-- TTL: an expired item is gone at once for every read, and memory_purge deletes it.
SELECT store_put('{tmp}', 'soon', '{"v": 1}', ttl => '1 hour') ->> 'event' AS event;
UPDATE memory.store_items SET expires_at = now() - interval '1 second' WHERE user_id = 'store-ann' AND key = 'soon';
SELECT store_get('{tmp}', 'soon') IS NULL AS expired, (SELECT count(*) FROM store_search('{tmp}')) AS found,
       (SELECT count(*) FROM store_list_namespaces('{tmp}')) AS namespaces;
SELECT store_put('{tmp}', 'later', '{"v": 2}', ttl => '1 hour') ->> 'event' AS event;
UPDATE memory.store_items SET expires_at = now() + interval '1 minute' WHERE user_id = 'store-ann' AND key = 'later';
SELECT store_get('{tmp}', 'later', refresh_ttl => false) IS NOT NULL AS live;
SELECT expires_at < now() + interval '2 minutes' AS not_refreshed FROM memory.store_items WHERE key = 'later';
SELECT store_get('{tmp}', 'later') IS NOT NULL AS live;
SELECT expires_at > now() + interval '59 minutes' AS refreshed FROM memory.store_items WHERE key = 'later';
UPDATE memory.store_items SET expires_at = now() + interval '1 minute' WHERE user_id = 'store-ann' AND key = 'later';
SELECT count(*) AS found FROM store_search('{tmp}');
SELECT expires_at > now() + interval '59 minutes' AS refreshed_by_search FROM memory.store_items WHERE key = 'later';
SELECT memory_purge() >= 0 AS purged;
SELECT key FROM memory.store_items WHERE user_id = 'store-ann' AND namespace = '{tmp}';
SELECT store_put('{tmp}', 'x', '{}', ttl => '-1 hour');
-- 0.13.0: ttl edges are 22023: a negative part, nothing, or more than 100 years.
SELECT store_put('{tmp}', 'x', '{}', ttl => '-1 mon +31 days');
SELECT store_put('{tmp}', 'x', '{}', ttl => '0');
SELECT store_put('{tmp}', 'x', '{}', ttl => '200 years');
SELECT store_put('{tmp}', 'x', '{}', ttl => '178000000 years');
SELECT store_batch('[{"op": "put", "namespace": ["tmp"], "key": "x", "value": {}, "ttl": 1e300}]');
-- 0.13.0: a condition whose value is an array or an object holds only where the field is there
-- and equal (0.12.0 also returned every item without the field); $or and the like are refused.
SELECT count(*) FROM (SELECT store_put('{acl}', k, v, index => 'false') FROM (VALUES
    ('shared', '{"acl": ["alice"], "meta": {"a": 1}}'::jsonb),
    ('both', '{"acl": ["alice", "bob"]}'),
    ('none', '{"text": "no acl"}')) t(k, v)) x;
SELECT key FROM store_search('{acl}', filter => '{"acl": ["alice"]}') ORDER BY key;
SELECT key FROM store_search('{acl}', filter => '{"acl": {"$eq": ["alice"]}}') ORDER BY key;
SELECT key FROM store_search('{acl}', filter => '{"meta": {"a": 1}}') ORDER BY key;
SELECT key FROM store_search('{acl}', filter => '{"acl": {"$ne": ["alice"]}}') ORDER BY key;
SELECT store_search('{acl}', filter => '{"$or": [{"acl": ["alice"]}, {"acl": ["bob"]}]}');
-- Batch: in order, one answer each, all or nothing.
SELECT store_batch('[{"op": "put", "namespace": ["b"], "key": "1", "value": {"n": 1}, "index": false},
                     {"op": "get", "namespace": ["b"], "key": "1"},
                     {"op": "put", "namespace": ["b"], "key": "1", "value": null},
                     {"op": "get", "namespace": ["b"], "key": "1"},
                     {"op": "list_namespaces", "prefix": ["docs"]}]') #- '{1,created_at}' #- '{1,updated_at}' AS answers;
SELECT store_batch('[{"op": "put", "namespace": ["b"], "key": "2", "value": {"n": 2}, "index": false},
                     {"op": "put", "namespace": [""], "key": "3", "value": {}}]');
SELECT count(*) AS none_written FROM memory.store_items WHERE user_id = 'store-ann' AND namespace = '{b}';
-- 0.13.0: a batch takes each op's keys only, and an idempotency key by store_put's rules.
SELECT store_batch('[{"op": "put", "namespace": ["b"], "key": "4", "value": {}, "tll": 5}]');
SELECT store_batch('[{"op": "get", "namespace": ["b"], "key": "4", "value": {}}]');
SELECT store_batch('[{"op": "put", "namespace": ["b"], "key": "5", "value": {"v": 1}, "index": false, "idempotency_key": "b-1"}]') AS first;
SELECT store_batch('[{"op": "put", "namespace": ["b"], "key": "5", "value": {"v": 1}, "index": false, "idempotency_key": "b-1"}]') AS repeat;
SELECT store_batch('[{"op": "put", "namespace": ["b"], "key": "5", "value": {"v": 2}, "index": false, "idempotency_key": "b-1"}]');
SELECT value FROM store_search('{b}') WHERE key = '5';
-- Bad input: clear errors, nothing written.
SELECT store_put('{}', 'k', '{}');
SELECT store_put('{a,NULL}', 'k', '{}');
SELECT store_put('{a}', '', '{}');
SELECT store_put('{a}', 'k', '[1]');
SELECT store_put('{a}', 'k', '{}', index => '"title"');
SELECT store_search('{a}', "limit" => 0);
SELECT store_list_namespaces(max_depth => 0);
-- History keeps events; a deleted item's events lose what it said, its namespace and key.
SELECT store_delete('{docs,public}', 'doc1') AS deleted, store_delete('{docs,public}', 'doc1') AS again;
SELECT event, old_ref IS NULL AS old_gone, new_ref IS NULL AS new_gone, meta ? 'key' AS has_key, meta ->> 'erased' AS erased
FROM memory.history WHERE user_id = 'store-ann' AND entity = 'store'
  AND memory_id IN (SELECT memory_id FROM memory.history WHERE user_id = 'store-ann' AND entity = 'store' AND event = 'DELETE')
ORDER BY ts, event;
-- Idempotent puts: a retry answers as the first call; another body under the key is 22023.
SELECT store_put('{idem}', 'k', '{"v": 1}', index => 'false', idempotency_key => 'p-1') ->> 'event' AS first;
SELECT store_put('{idem}', 'k', '{"v": 1}', index => 'false', idempotency_key => 'p-1') ->> 'event' AS repeat;
SELECT store_put('{idem}', 'k', '{"v": 2}', index => 'false', idempotency_key => 'p-1');
-- Screened as every write is.
SELECT store_put('{sec}', 'k', '{"note": "my password is hunter2"}', index => 'false') ->> 'event' AS event;
SELECT store_get('{sec}', 'k') -> 'value' ->> 'note' AS note;
-- Tenants apart: another tenant sees none of it, and cannot name this one.
SET memory_ext.user_id = 'store-bob';
SELECT count(*) AS seen FROM store_search('{}', "limit" => 100);
SELECT store_get('{cars}', 'doc1') IS NULL AS hidden;
SELECT store_get('{cars}', 'doc1', user_id => 'store-ann');
RESET memory_ext.user_id;
-- A text whose vector could not be made at put (the provider down; here: taken away) is embedded
-- by the backfill, and then found; a caller's own vector is never replaced.
SET memory_ext.user_id = 'store-ann';
SELECT store_put('{later}', 'k1', '{"text": "the lighthouse keeper feeds the cats"}') ->> 'event' AS event;
SELECT store_put('{later}', 'k2', '{"text": "x"}', embeddings => '{"$": [0.1, 0.2, 0.3]}') ->> 'event' AS event;
UPDATE memory.store_vectors SET embedding = NULL, embedding_model = NULL WHERE user_id = 'store-ann' AND namespace = '{later}' AND key = 'k1';
SELECT memory_reembed(100) >= 1 AS embedded;
SELECT key, embedding IS NOT NULL AS has_vector, embedding_model = 'client' AS callers
FROM memory.store_vectors WHERE user_id = 'store-ann' AND namespace = '{later}' ORDER BY key;
SELECT key, score > 0.3 AS close FROM store_search('{later}', 'who feeds the cats?');
-- Export carries the store (its texts without vectors, but for the caller's own); an import
-- into another tenant brings it back and embeds it with the built-in model in its own
-- statement (0.13.0), the caller's own vectors as they were.
SELECT jsonb_array_length(d -> 'store_items') > 0 AS items, jsonb_array_length(d -> 'store_vectors') > 0 AS texts,
       bool_and((v ? 'embedding') = (v ->> 'embedding_model' IS NOT DISTINCT FROM 'client')) AS only_callers_vectors,
       count(*) FILTER (WHERE v ? 'embedding') AS callers
FROM memory_export('store-ann') d, jsonb_array_elements(d -> 'store_vectors') v GROUP BY d;
SELECT (SELECT count(*) FROM memory_export_rows() WHERE section = 'store_items')
     = (SELECT count(*) FROM memory.store_items WHERE user_id = 'store-ann') AS rows_match;
SELECT memory_export('store-ann') AS doc \gset
SET memory_ext.user_id = 'store-copy';
SELECT (memory_import(:'doc') -> 'inserted' ->> 'store_items')::int > 0 AS imported;
SELECT memory_import(:'doc') -> 'inserted' ->> 'store_items' AS again;
SELECT count(*) FILTER (WHERE embedding IS NULL) AS waiting, count(*) FILTER (WHERE embedding_model = 'client') AS callers
FROM memory.store_vectors WHERE user_id = 'store-copy';
SELECT embedding::text AS callers_vector FROM memory.store_vectors WHERE user_id = 'store-copy' AND namespace = '{later}' AND key = 'k2';
SELECT key FROM store_search('{later}', 'who feeds the cats?', "limit" => 1);
RESET memory_ext.user_id;
