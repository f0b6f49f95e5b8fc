-- The store: the namespaces of live items ($1 user_id) matching a prefix $2 and a suffix $3
-- ('*' any one label), cut to $4 labels when not NULL, each once, in order; $5 limit, $6 offset.
SELECT ns FROM (
    SELECT DISTINCT CASE WHEN $4::int IS NULL THEN namespace ELSE namespace[1:$4::int] END AS ns
    FROM memory.store_items
    WHERE user_id = $1 AND (expires_at IS NULL OR expires_at > now())
      AND memory._store_ns_match(namespace, $2, $3)
) x
ORDER BY ns
LIMIT $5 OFFSET $6
