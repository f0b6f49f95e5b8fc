-- Tenants with rows the backfill should embed (the claims of embed_reembed_*.sql, without the
-- lock): memories, messages, memory files or store texts with no vector or one of an old model ($2), not
-- given up on and due for a retry. The backfill claims one tenant's rows at a time. $1 how many
-- tenants; $3 a number that changes every batch: the tenants are taken in an order it shuffles,
-- so that with more tenants waiting than a batch serves, each batch serves others.
SELECT user_id FROM (
    SELECT i.user_id FROM memory.items i
    WHERE (i.embedding_model IS NULL OR i.embedding_model = ANY($2::text[])) AND i.state = 'active'
      AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures f
                      WHERE f.user_id = i.user_id AND f.target = 'item' AND f.row_id = i.id
                        AND (f.gave_up OR f.next_attempt_at > now()))
    UNION
    SELECT m.user_id FROM memory.messages m
    WHERE (m.embedding_model IS NULL OR m.embedding_model = ANY($2::text[]))
      AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures f
                      WHERE f.user_id = m.user_id AND f.target = 'message' AND f.row_id = m.id
                        AND (f.gave_up OR f.next_attempt_at > now()))
    UNION
    SELECT d.user_id FROM memory.files d
    WHERE (d.embedding_model IS NULL OR d.embedding_model = ANY($2::text[]))
      AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures f
                      WHERE f.user_id = d.user_id AND f.target = 'file' AND f.row_id = d.id
                        AND (f.gave_up OR f.next_attempt_at > now()))
    UNION
    SELECT v.user_id FROM memory.store_vectors v
    WHERE (v.embedding_model IS NULL OR v.embedding_model = ANY($2::text[]))
      AND NOT EXISTS (SELECT 1 FROM memory.embedding_failures f
                      WHERE f.user_id = v.user_id AND f.target = 'store' AND f.row_id = v.id
                        AND (f.gave_up OR f.next_attempt_at > now()))
) waiting
ORDER BY md5(user_id || $3::text)
LIMIT $1
