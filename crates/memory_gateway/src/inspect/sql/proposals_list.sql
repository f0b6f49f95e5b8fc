-- The tenant's consent proposals, pending first, then the newest decided. $1 tenant.
SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY (p.status = 'pending') DESC, p.created_at DESC), '[]')::text
FROM (SELECT * FROM memory_proposals($1::text) LIMIT 500) p
