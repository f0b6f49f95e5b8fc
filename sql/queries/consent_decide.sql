-- Consent: a pending proposal is decided ($1 user_id, $2 id, $3 status: approved, rejected or
-- applied, $4 the memory written, $5 who decided). Nothing when it is no longer pending.
UPDATE memory.proposals
SET status = $3, memory_id = $4::uuid, decided_at = now(), decided_by = $5
WHERE user_id = $1 AND id = $2::uuid AND status = 'pending'
RETURNING id::text
