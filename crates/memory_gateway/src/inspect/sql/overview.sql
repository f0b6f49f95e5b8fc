-- The overview page: memory_overview (docs/api.md "Statistics"). $1 tenant.
SELECT memory_overview($1::text)::text
