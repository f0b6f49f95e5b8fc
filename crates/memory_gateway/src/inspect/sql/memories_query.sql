-- A search as the agent makes it (memory_query, $2), and for each item found what the
-- response leaves out that the page shows and filters on (its text as stored, thread, state,
-- kind, actor).
-- $1 tenant.
WITH q AS (SELECT memory_query($2::text::jsonb) AS r)
SELECT jsonb_build_object(
           'response', q.r,
           'rows', (SELECT coalesce(jsonb_object_agg(i.id, jsonb_build_object(
                               'text', i.text, 'thread_id', i.thread_id, 'state', i.state, 'kind', i.kind,
                               'actor_id', i.actor_id, 'tags', i.tags)), '{}')
                    FROM memory.items i
                    WHERE i.user_id = $1::text
                      AND i.id IN (SELECT (x ->> 'id')::uuid FROM jsonb_array_elements(q.r -> 'items') x)))::text
FROM q
