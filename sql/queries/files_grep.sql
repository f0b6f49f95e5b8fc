-- memory_file_grep: matching lines of files under a prefix, by path and line. Whole files are
-- tested first; only matching ones are split into lines. $1 user_id, $2 prefix, $3 pattern,
-- $4 limit.
SELECT f.path, l.n::int, left(l.line, 1000)
FROM memory.files f
CROSS JOIN LATERAL regexp_split_to_table(f.content, E'\n') WITH ORDINALITY AS l(line, n)
WHERE f.user_id = $1 AND starts_with(f.path, $2) AND f.content ~ $3 AND l.line ~ $3
ORDER BY f.path, l.n
LIMIT $4
