-- Extraction without an LLM: active semantic memories whose text begins with the subject $2
-- (lower case, then a space or an apostrophe), newest first: the only ones the no-LLM supersede
-- rule can replace. $1 user_id.
SELECT id::text, text
FROM memory.items
WHERE user_id = $1 AND state = 'active' AND kind = 'semantic'
  AND (starts_with(lower(text), $2 || ' ') OR starts_with(lower(text), $2 || ''''))
ORDER BY created_at DESC
LIMIT 50
