-- Consent: a proposal the caller may see ($1 id; $2 the tenant, NULL: any it sees; row security
-- applies). The decision itself is guarded by consent_decide.sql's status check. Returns user_id, status, expired, request, expires_at.
SELECT user_id, status, expires_at <= now(), request,
       to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM memory.proposals
WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2)
LIMIT 2
