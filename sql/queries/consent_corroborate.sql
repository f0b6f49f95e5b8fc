-- Consent: a pending corroborate proposal saying the same ($1 user_id, $2 category, $3 text,
-- compared case-insensitively) gains a signal. Returns its id and signals, or nothing.
UPDATE memory.proposals
SET signals = signals + 1
WHERE (user_id, id) = (SELECT user_id, id FROM memory.proposals
                       WHERE user_id = $1 AND status = 'pending' AND policy = 'corroborate'
                         AND category = $2 AND lower(text) = lower($3) AND expires_at > now()
                       ORDER BY created_at LIMIT 1 FOR UPDATE)
RETURNING id::text, signals
