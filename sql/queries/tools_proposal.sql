-- memory_consent as a tool: the tenant's proposal $2: status, policy, whether it expired, when
-- it was proposed. $1 user_id.
SELECT status, policy, expires_at <= now(), created_at FROM memory.proposals
WHERE user_id = $1 AND id = $2::uuid
