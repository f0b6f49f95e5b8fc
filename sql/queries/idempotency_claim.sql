-- Claims idempotency key $2 of tenant $1 for a call of $3 whose body ($4,
-- memory_core::idempotency::body) is kept as its SHA-256. A row comes back when the key is
-- this call's; none when it is taken, by a committed call or by this transaction. A call still
-- in flight with the same key holds the index entry: this statement waits for it. An expired
-- key was deleted first (idempotency_expire.sql). ON CONFLICT DO NOTHING, not an update of the
-- expired row: Citus refuses now() in an ON CONFLICT's update (docs/citus.md).
INSERT INTO memory.idempotency_keys (user_id, key, op, body_hash)
VALUES ($1, $2, $3, sha256(convert_to($4, 'UTF8')))
ON CONFLICT (user_id, key) DO NOTHING
RETURNING true
