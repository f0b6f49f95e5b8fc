-- Approve or reject ($3) one proposal ($2). $1 tenant (the functions act for the session's).
SELECT CASE $3::text WHEN 'approve' THEN memory_approve($2::text::uuid) ELSE memory_reject($2::text::uuid) END::text
WHERE $1::text IS NOT NULL
