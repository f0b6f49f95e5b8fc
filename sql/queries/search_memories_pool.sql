-- memory_query's candidate pool and every signal rank.rs fuses, in one statement, from the
-- seeds sql/queries/search_memories_seed.sql found.
--
-- Every lookup here is by key (episode edges of given ids, memories by id, thread terms of
-- given lexemes), so src/ops/search.rs keeps one generic plan of it per backend (planned once,
-- not per call); the tenant's partition is chosen when the plan starts (run-time pruning).
--
-- src/ops/search.rs fills in three template slots (in braces, never in a comment): "state",
-- which states count (active; superseded too for `as_of` and `include_superseded`), "filters",
-- extra AND conditions on `i` whose values are parameters, and "similarity", the cosine
-- expression with the active model's id, type and operator as literals. Its query vector is a
-- scalar subquery, `(SELECT $3::vector(n))`: an InitPlan, parsed from text once per execution
-- (as a plain cast in a generic plan, it was parsed again for every row: 384 strtof calls a
-- row, ~9% of a query's time by perf).
--
-- "owner" is `= $1` for the caller alone, `= ANY($1::text[])` with the spaces granted to it
-- (src/ops/search/memories.rs `Owners`); threads are then one corpus over all owners. Memories
-- are looked up by their whole key (each seed with its owner), so that one generic plan serves
-- both: with spaces, each lookup's partition is chosen as the join runs (a plan for each call,
-- to prune by the owners' array, cost 3 ms of planning a query at 100,000 memories with 10
-- spaces, and still probed every seed in every owner's partition).
--
-- $1 user_id (or the owners' keys), $2 the seeds' ids, $3 query vector (text form) or NULL, $4 query lexemes, $5 each
-- lexeme's idf in the tenant (aligned with $4), $6 the tenant's average memory length, $7 the
-- seeds' owners (aligned with $2). A
-- memory's BM25 is memory.bm25 (src/pg/tsvector.rs); a thread's is computed here over
-- memory.thread_terms, with the same k1 = 0.9, b = 0.4.
--
-- Episode hops go through arrays (`= ANY`) so that each hop is one index scan per direction
-- over memory.relations, whatever the planner guesses about CTE sizes (a guess of "many seeds"
-- once made it hash-join all of the tenant's edges: 0.9 ms for 40 seeds).
WITH hop1 AS MATERIALIZED (
    SELECT array_agg(h.id) AS ids, array_agg(h.user_id) AS users FROM (
        SELECT r.to_id AS id, r.user_id FROM memory.relations r
        WHERE r.user_id {owner} AND r.from_id = ANY($2::uuid[]) AND r.relation_type = 'follows'
        UNION
        SELECT r.from_id, r.user_id FROM memory.relations r
        WHERE r.user_id {owner} AND r.to_id = ANY($2::uuid[]) AND r.relation_type = 'follows'
    ) h
), hop2 AS MATERIALIZED (
    SELECT array_agg(h.id) AS ids, array_agg(h.user_id) AS users FROM (
        SELECT r.to_id AS id, r.user_id FROM memory.relations r
        WHERE r.user_id {owner} AND r.from_id = ANY((SELECT ids FROM hop1)::uuid[]) AND r.relation_type = 'follows'
        UNION
        SELECT r.from_id, r.user_id FROM memory.relations r
        WHERE r.user_id {owner} AND r.to_id = ANY((SELECT ids FROM hop1)::uuid[]) AND r.relation_type = 'follows'
    ) h
), pool AS (
    SELECT p.id, p.user_id FROM unnest($2::uuid[], $7::text[]) p(id, user_id)
    UNION SELECT p.id, p.user_id FROM hop1, unnest(hop1.ids, hop1.users) p(id, user_id)
    UNION SELECT p.id, p.user_id FROM hop2, unnest(hop2.ids, hop2.users) p(id, user_id)
), rows AS (
    SELECT i.*
    -- By the whole key: with spaces, each lookup reads its owner's partition only (pruned as
    -- the join runs), in the same generic plan as the caller's alone.
    FROM pool p JOIN memory.items i ON i.user_id {owner} AND i.user_id = p.user_id AND i.id = p.id
    WHERE {state} {filters}
), tc AS MATERIALIZED (
    -- The tenant's threads and their lengths, read once (a generic plan otherwise looks each
    -- thread up once per matching term row).
    SELECT user_id, thread_id, len FROM memory.thread_corpus WHERE user_id {owner}
), tstats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, greatest(avg(len), 1)::float8 AS avglen FROM tc
), qtt AS MATERIALIZED (
    -- The tenant's thread-term rows of the query's lexemes, read once through the lexeme index:
    -- a lexeme's rows give its thread document frequency, and every thread's score. (Joined to
    -- thread_corpus here, the planner walked each thread's every term through the primary key.)
    SELECT user_id, thread_id, lexeme, tf FROM memory.thread_terms WHERE user_id {owner} AND lexeme = ANY($4::text[])
), tbm25 AS MATERIALIZED (
    SELECT tt.user_id, tt.thread_id,
           sum(ln(1 + (ts.n - d.df + 0.5) / (d.df + 0.5)) * tt.tf * 1.9
               / (tt.tf + 0.9 * (0.6 + 0.4 * tc.len / ts.avglen))) AS score
    FROM qtt tt
    JOIN (SELECT lexeme, count(*)::float8 AS df FROM qtt GROUP BY lexeme) d ON d.lexeme = tt.lexeme
    JOIN tc ON tc.user_id = tt.user_id AND tc.thread_id = tt.thread_id
    CROSS JOIN tstats ts
    -- Scored for the pool's threads only (the document frequencies above count every thread):
    -- joined back to the rows, a score per thread of the owners was read once per row.
    WHERE (tt.user_id, tt.thread_id) IN (SELECT r.user_id, r.thread_id FROM rows r)
    GROUP BY tt.user_id, tt.thread_id
)
SELECT r.id::text, r.category, r.text, r.content, r.importance, r.pinned, r.tags, r.metadata,
       to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       extract(epoch FROM r.happened_at)::float8 / 86400,
       r.thread_id, r.actor_id,
       {similarity},
       coalesce(memory.bm25(r.tsv, $4::text[], $5::float8[], $6::float8), 0)::float8,
       coalesce(t.score, 0)::float8,
       -- Episode edges out of this memory (the ranking keeps those into the pool), by its
       -- owner (one index descent with spaces; "owner" too, so Citus routes the statement).
       ARRAY(SELECT f.to_id::text FROM memory.relations f
             WHERE f.user_id {owner} AND f.user_id = r.user_id AND f.from_id = r.id AND f.relation_type = 'follows'),
       -- A turn of a conversation: its neighbours and thread count for it (rank.rs says why).
       (r.kind IN ('episodic', 'archival') OR r.role IS NOT NULL),
       to_char(r.happened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       -- Older memories this one was linked to when written (a newer fact may update them).
       ARRAY(SELECT f.to_id::text FROM memory.relations f
             WHERE f.user_id {owner} AND f.user_id = r.user_id AND f.from_id = r.id AND f.relation_type = 'related_to'),
       -- A superseded memory's successor (only with as_of / include_superseded).
       r.superseded_by::text,
       -- An insight: an observation, not something said; it ranks with a lower weight.
       r.kind = 'insight',
       -- Whose it is: the caller's, or a space's (its label in the results).
       r.user_id
FROM rows r LEFT JOIN tbm25 t ON t.user_id = r.user_id AND t.thread_id = r.thread_id
