-- memory_query's keyword seeds where row-level security would keep them off the full-text index
-- (src/ops/search/memories.rs `Statements::seeds`): the best memories of the owners by BM25,
-- read through the GIN index on tsv as the extension's owner.
--
-- # Why as the owner
-- Under row-level security Postgres evaluates a table's policies before any condition that is
-- not leakproof, and `@@` is not: for an ordinary role (every application's), `tsv @@ query`
-- could not be an index condition, and the keyword side read every memory of the tenant and
-- its spaces through the policies (1.5 ms for a tenant of 1,000 memories, growing with the
-- tenant). Here the owners are the ones the caller's own grants gave (`Owners`), and these ids
-- are only candidates: the seed statement (sql/queries/search_memories_seed.sql) reads them
-- again as the caller, so row-level security still decides which of them it may see.
--
-- The seed statement's parameters and slots, in its numbering: $1 user_id (or the owners'
-- keys), $3 tsquery text, $4 query lexemes, $5 BM25 candidates, $6 each lexeme's idf, $7 the
-- average memory length; the filters numbered after $9.
SELECT ARRAY(
    SELECT i.id
    FROM memory.items i
    WHERE i.user_id {owner} AND {state} AND i.tsv @@ $3::tsquery {filters}
    -- Ties broken by id: by the rows' physical order, which every read's access bookkeeping
    -- moves, the same query twice in a row found other seeds at the limit (5 of 40 at 100k).
    ORDER BY memory.bm25(i.tsv, $4::text[], $6::float8[], $7::float8) DESC, i.id
    LIMIT $5
)
