-- A query's lexemes (src/pg/fulltext.rs, sql/search.sql memory.query_lexemes). $1 user_id,
-- $2 query text, $3 its language when detection is sure.
SELECT memory.query_lexemes($1, $2, $3)
