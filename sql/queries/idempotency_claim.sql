-- Claims idempotency key $2 of tenant $1 for a call of $3 whose body ($4,
-- memory_core::idempotency::body) is kept as its SHA-256. A row comes back when the key is
-- this call's: new, or older than $5 days (memory_ext.idempotency_days; the purge had not come
-- yet). No row: the key is live and taken, by a committed call or by this transaction. A call
-- still in flight with the same key holds the index entry; this statement waits for it.
INSERT INTO memory.idempotency_keys AS k (user_id, key, op, body_hash)
VALUES ($1, $2, $3, sha256(convert_to($4, 'UTF8')))
ON CONFLICT (user_id, key) DO UPDATE
   SET op = EXCLUDED.op, body_hash = EXCLUDED.body_hash, answer = NULL, created_at = now()
 WHERE k.created_at < now() - make_interval(days => $5)
RETURNING true
