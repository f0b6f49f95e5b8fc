-- A taken idempotency key ($1 tenant, $2 key): whether it was taken for the same body as $3
-- asks, by which operation, and the first call's answer (NULL while that call is unfinished).
SELECT body_hash = sha256(convert_to($3, 'UTF8')), op, answer
FROM memory.idempotency_keys
WHERE user_id = $1 AND key = $2
