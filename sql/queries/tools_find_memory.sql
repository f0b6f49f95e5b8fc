-- memory_forget and memory_correct as tools: the active memory a model named, by id ($3 true)
-- or by its text as a search showed it (case and a final full stop aside), within the
-- categories the agent may read ($4, NULL: any). Stored details are opened by key, not fixed
-- here. At most three rows: more than one is ambiguous to the model.
-- $1 user_id, $2 the id or the text, $3 whether $2 is an id, $4 categories.
SELECT i.id::text, i.text, i.category, i.kind
FROM memory.items i
WHERE i.user_id = $1
  AND i.state = 'active'
  AND i.kind <> 'detail'
  AND CASE WHEN $3 THEN i.id::text = lower($2)
           ELSE lower(rtrim(btrim(i.text), '.')) = lower(rtrim(btrim($2), '.')) END
  AND ($4::text[] IS NULL OR i.category = ANY($4::text[]))
ORDER BY i.created_at
LIMIT 3
