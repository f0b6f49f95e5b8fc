-- A detail key's taken variants in the tenant: the base and base_<n>. $1 user_id, $2 base.
SELECT key FROM memory.details
WHERE user_id = $1 AND (key = $2 OR (starts_with(key, $2 || '_') AND substr(key, length($2) + 2) ~ '^[0-9]+$'))
