-- Consent: the pending corroborate proposals of a category, oldest first, for corroboration by
-- meaning (src/ops/consent.rs). At most 20: a tenant has few open proposals per field, and
-- each is embedded on the way. $1 user_id, $2 category.
SELECT id::text, text FROM memory.proposals
WHERE user_id = $1 AND status = 'pending' AND policy = 'corroborate' AND category = $2
  AND expires_at > now()
ORDER BY created_at, id
LIMIT 20
