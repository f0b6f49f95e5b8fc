-- A query's lexemes (src/pg/fulltext.rs, sql/search.sql memory.query_lexemes). $1 user_id,
-- $2 query text, $3 its language when detection is sure, $4 the tenant's language ('' for
-- none), read by the caller.
SELECT memory.query_lexemes($1, $2, $3, $4)
