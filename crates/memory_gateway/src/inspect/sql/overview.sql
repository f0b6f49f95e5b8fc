-- The overview page: memory_overview and the tenant's pending proposals count. $1 tenant.
SELECT memory_overview($1::text)::text
