-- Before a claim: key $2 of tenant $1 if it is older than $3 days (memory_ext.idempotency_days;
-- the purge had not come yet). A repeat after that writes again.
DELETE FROM memory.idempotency_keys
WHERE user_id = $1 AND key = $2 AND created_at < now() - make_interval(days => $3)
