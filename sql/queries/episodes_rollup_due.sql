-- Weekly roll-ups (docs/design.md "Episodes"): projects whose episodes (files under episodes/ whose metadata
-- names a project: the thread's metadata "project") need their summary rewritten: no summary
-- yet, or one a week old with episodes since. $1 tenant (NULL: all the caller sees), $2 one
-- project (NULL: all), $3 now regardless of the week (memory_rollup), still only with new
-- episodes. Returns user_id, project, the last roll-up's end, the summary's path and content.
WITH p AS (
    SELECT user_id, metadata->>'project' AS project, max(created_at) AS newest
    FROM memory.files
    WHERE ($1::text IS NULL OR user_id = $1) AND starts_with(path, 'episodes/')
      AND metadata ->> 'project' <> '' AND ($2::text IS NULL OR metadata->>'project' = $2)
    GROUP BY 1, 2
)
SELECT p.user_id, p.project, s.metadata->>'rolled_up_to', s.path, s.content
FROM p
LEFT JOIN memory.files s
       ON s.user_id = p.user_id AND starts_with(s.path, 'projects/')
      AND s.metadata->>'kind' = 'project_summary' AND s.metadata->>'project' = p.project
WHERE s.path IS NULL
   OR (p.newest > (s.metadata->>'rolled_up_to')::timestamptz
       AND ($3 OR (s.metadata->>'rolled_up_at')::timestamptz <= now() - interval '7 days'))
ORDER BY 1, 2
