-- memory_query: the categories in context 'rag' with a rag_length (memory_configure): recall returns at most that many of each. $1 user_id.
SELECT name, rag_length FROM memory.categories
WHERE user_id = $1 AND context = 'rag' AND rag_length IS NOT NULL
