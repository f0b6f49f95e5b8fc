-- A newer fact replacing this memory: memory_write with "supersedes", in the older one's kind
-- and category. $1 tenant, $2 id of the older memory, $3 the new text.
SELECT memory_write(jsonb_strip_nulls(jsonb_build_object(
           'text', $3::text, 'supersedes', $2::text, 'category', o.category, 'kind', o.kind,
           'thread_id', o.thread_id, 'source', 'user')))::text
FROM memory.items o WHERE o.user_id = $1::text AND o.id = $2::text::uuid
