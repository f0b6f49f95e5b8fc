-- The tenant's export (memory_export: the document memory_import takes). $1 tenant.
SELECT memory_export($1::text)::text
