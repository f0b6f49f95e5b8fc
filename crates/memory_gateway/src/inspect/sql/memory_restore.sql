-- $1 tenant (unused: the function acts for the session's tenant), $2 id.
SELECT memory_restore($2::text::uuid)::text WHERE $1::text IS NOT NULL
