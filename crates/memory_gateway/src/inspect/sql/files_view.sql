-- One memory file with its history; NULL when the tenant has no file at that path. $1 tenant,
-- $2 path.
SELECT jsonb_build_object(
           'file', jsonb_build_object('id', f.id, 'path', f.path, 'title', f.title, 'content', f.content,
                                      'tags', f.tags, 'metadata', f.metadata, 'created_at', f.created_at,
                                      'updated_at', f.updated_at, 'chars', char_length(f.content)),
           'history', (SELECT coalesce(jsonb_agg(to_jsonb(h) ORDER BY h.ts DESC), '[]') FROM memory_history(f.id) h))::text
FROM memory.files f WHERE f.user_id = $1::text AND f.path = $2::text
