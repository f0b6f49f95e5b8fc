-- The inspector's edit: memory_write with the memory's id and the fields the form sends, for a
-- memory of the tenant's (no row otherwise: another tenant's id is not found). $1 tenant, $2 id,
-- $3 text, $4 category ('' none), $5 importance, $6 tags (comma separated), $7 pinned.
-- memory_write says why when it refuses (a memory that is not active, a text too long).
SELECT memory_write(jsonb_strip_nulls(jsonb_build_object(
           'id', $2::text, 'text', $3::text, 'category', nullif(btrim($4::text), ''), 'importance', $5::text::int,
           'tags', (SELECT coalesce(jsonb_agg(btrim(t)), '[]') FROM unnest(string_to_array($6::text, ',')) t WHERE btrim(t) <> ''),
           'pinned', $7::text::boolean, 'source', 'user')))::text
FROM memory.items o WHERE o.user_id = $1::text AND o.id = $2::text::uuid
