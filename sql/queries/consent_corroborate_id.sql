-- Consent: a pending corroborate proposal found by meaning (src/ops/consent.rs) gains a
-- signal. $1 user_id, $2 its id. Returns its id and signals, or nothing when it was decided
-- meanwhile.
UPDATE memory.proposals
SET signals = signals + 1
WHERE user_id = $1 AND id = $2::uuid AND status = 'pending' AND expires_at > now()
RETURNING id::text, signals
