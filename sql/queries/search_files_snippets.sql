-- memory_file_search's snippets, only for the files it returns (ts_headline re-parses the text,
-- ~1 ms per file), and when each last changed (the caller takes its UTC day: Citus allows no
-- STABLE function such as to_char in RETURNING), recording their access in the same statement. $1 user_id, $2 paths, $3 tsquery text or NULL.
-- The headline reads the file in its language's configuration (a text in a script written
-- without spaces finds no bigram in its raw text and shows its beginning).
UPDATE memory.files f SET last_accessed_at = now() WHERE f.user_id = $1 AND f.path = ANY($2)
RETURNING f.path,
    CASE WHEN $3::text IS NOT NULL AND f.tsv @@ $3::tsquery
         THEN regexp_replace(ts_headline(memory.ts_config(f.language), left(f.content, 20000), $3::tsquery,
                  'MaxWords=30, MinWords=10, MaxFragments=1, StartSel="", StopSel=""'), '\s+', ' ', 'g')
         ELSE left(regexp_replace(left(f.content, 1000), '\s+', ' ', 'g'), 200) END,
    f.updated_at
