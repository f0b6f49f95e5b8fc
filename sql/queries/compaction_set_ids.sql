-- set_message_ids: the thread's context becomes exactly the messages $3 (ids as text); a
-- message taken out is unpinned. How many left the context, how many came back, how many are
-- in it now. $1 user_id, $2 thread_id.
WITH changed AS (
    UPDATE memory.messages m
    SET in_context = m.id::text = ANY($3),
        pinned = m.pinned AND m.id::text = ANY($3)
    WHERE m.user_id = $1 AND m.thread_id = $2
      AND (m.in_context IS DISTINCT FROM (m.id::text = ANY($3)) OR (m.pinned AND NOT m.id::text = ANY($3)))
    RETURNING m.in_context
)
SELECT count(*) FILTER (WHERE NOT in_context),
       count(*) FILTER (WHERE in_context),
       (SELECT count(*) FROM memory.messages x WHERE x.user_id = $1 AND x.thread_id = $2 AND x.id::text = ANY($3))
FROM changed
