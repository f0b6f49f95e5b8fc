-- Each query lexeme's document frequency among the tenant's files, counted through the
-- full-text index (memory_file_search's candidate terms). $1 user_id, $2 lexemes.
SELECT l, (SELECT count(*) FROM memory.files f
           WHERE f.user_id = $1
             AND f.tsv @@ (quote_literal(l) || ' & ' || quote_literal(memory.tenant_lexeme($1)))::tsquery)::float8
FROM unnest($2::text[]) l
