-- The store: a page of live items under a namespace prefix ($1 user_id, $2 prefix, $3 filter
-- conditions for memory._store_match, $4 limit, $5 offset, $6 query vector or NULL, $7 its
-- model, $8 refresh_ttl, $9 the statement's time: Citus refuses now() with a column in an
-- UPDATE). With a vector: by cosine similarity of the item's best-matching
-- indexed text (items with no vector of that model last, score NULL), then newest first;
-- without: newest first. The page's items with a ttl are refreshed when $8.
WITH page AS (
    SELECT s.namespace, s.key, s.value, s.created_at, s.updated_at,
           (SELECT max(1 - (v.embedding {op} $6::{vector}))
              FROM memory.store_vectors v
             WHERE $6 IS NOT NULL AND v.user_id = s.user_id AND v.namespace = s.namespace
               AND v.key = s.key AND v.embedding_model = $7
               AND {vector_dims}(v.embedding) = {vector_dims}($6::{vector})) AS score
    FROM memory.store_items s
    WHERE s.user_id = $1 AND s.namespace[1:cardinality($2::text[])] = $2::text[]
      AND (s.expires_at IS NULL OR s.expires_at > $9::timestamptz)
      AND memory._store_match(s.value, $3)
    ORDER BY score DESC NULLS LAST, s.updated_at DESC, s.namespace, s.key
    LIMIT $4 OFFSET $5
), refreshed AS (
    UPDATE memory.store_items s SET expires_at = memory._seconds_after($9::timestamptz, extract(epoch FROM s.ttl)::float8)
    FROM page p
    WHERE $8 AND s.user_id = $1 AND s.namespace = p.namespace AND s.key = p.key AND s.ttl IS NOT NULL
    RETURNING 1
)
SELECT jsonb_build_object('namespace', to_jsonb(namespace), 'key', key, 'value', value,
                          'created_at', created_at, 'updated_at', updated_at, 'score', score)
FROM page, (SELECT count(*) FROM refreshed) r
ORDER BY score DESC NULLS LAST, updated_at DESC, namespace, key
