-- The store: a page of live items under a namespace prefix ($1 user_id, $2 prefix: found by its
-- key through store_items_ns_idx, sql/store.sql; $3 the filter's conditions that are not
-- equalities to a JSON scalar, for memory._store_match (the match slot: true when there are none),
-- $10 those equalities as one document the item must contain (jsonb @>); $4 limit, $5 offset, $6 query vector or NULL, $7 its
-- model, $8 refresh_ttl, $9 the statement's time: Citus refuses now() with a column in an
-- UPDATE). With a vector: by cosine similarity of the item's best-matching
-- indexed text (items with no vector of that model last, score NULL), then newest first;
-- without: newest first. The score slot is the similarity subquery (store_search_score.sql), or NULL
-- without a vector: a constant sort key drops out, and the newest-first walk of
-- store_items_updated_idx can stop at the page. The page's items with a ttl are refreshed
-- when $8.
WITH page AS (
    SELECT s.namespace, s.key, s.value, s.created_at, s.updated_at, {score} AS score
    FROM memory.store_items s
    WHERE s.user_id = $1 AND s.ns_key LIKE memory._store_ns_like($2::text[])
      AND (s.expires_at IS NULL OR s.expires_at > $9::timestamptz)
      AND s.value @> $10::jsonb AND {match}
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
