-- The memory-file tree under a prefix (memory_file_ls), or a search (memory_file_search) or a
-- grep (memory_file_grep) when one is asked. $1 tenant, $2 prefix, $3 search, $4 pattern.
SELECT jsonb_build_object(
           'files', (SELECT coalesce(jsonb_agg(to_jsonb(f) ORDER BY f.path), '[]')
                     FROM memory_file_ls(nullif($2::text, ''), 1000, $1::text) f),
           'search', CASE WHEN coalesce($3::text, '') <> '' THEN
                         (SELECT coalesce(jsonb_agg(to_jsonb(s) ORDER BY s.score DESC), '[]')
                          FROM memory_file_search($3::text, NULL, 20, $1::text) s) END,
           'grep', CASE WHEN coalesce($4::text, '') <> '' THEN
                       (SELECT coalesce(jsonb_agg(to_jsonb(g)), '[]')
                        FROM memory_file_grep($4::text, nullif($2::text, ''), 200, $1::text) g) END)::text
