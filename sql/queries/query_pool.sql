-- memory_query's candidate pool and every signal rank.rs fuses, in one statement.
--
-- src/api/query.rs fills in four template slots (in braces below, never in a comment): "dense",
-- the vector side (a CTE, or an empty one); "lexical", false when no query term is worth a
-- full-text lookup (memory_core::rank::candidate_terms); "filters", extra AND conditions on
-- `i` whose values are parameters; "similarity", the cosine expression. The active model's id,
-- type and operator are written into them as literals so that the planner can use that model's
-- partial HNSW index (a parameter would hide it behind a generic plan).
--
-- $1 user_id, $2 query vector (text form) or NULL, $3 tsquery text or NULL, $4 query lexemes,
-- $5 candidates per side. BM25 with k1 = 0.9, b = 0.4 (tuned on the LoCoMo dev split).
WITH stats AS (
    SELECT c.docs::float8 AS docs, greatest(c.total_len::float8 / greatest(c.docs, 1), 1) AS avglen
    FROM memory.corpus c WHERE c.user_id = $1
), qterms AS (
    SELECT l.lexeme, ln(1 + (s.docs - coalesce(x.df, 0) + 0.5) / (coalesce(x.df, 0) + 0.5)) AS idf
    FROM unnest($4::text[]) l(lexeme) CROSS JOIN stats s
    LEFT JOIN memory.lexicon x ON x.user_id = $1 AND x.lexeme = l.lexeme
), lex AS (
    SELECT i.id
    FROM memory.items i
    WHERE {lexical} AND i.user_id = $1 AND i.state = 'active' AND i.tsv @@ $3::tsquery {filters}
    ORDER BY (SELECT sum(q.idf * coalesce(array_length(u.positions, 1), 1) * 1.9
                         / (coalesce(array_length(u.positions, 1), 1) + 0.9 * (0.6 + 0.4 * (length(i.tsv) - 1) / s.avglen)))
              FROM unnest(i.tsv) u JOIN qterms q ON q.lexeme = u.lexeme CROSS JOIN stats s) DESC NULLS LAST
    LIMIT $5
){dense}, seed AS (
    SELECT id FROM lex UNION SELECT id FROM dense
), hop1 AS (
    SELECT r.to_id AS id FROM memory.relations r JOIN seed s ON r.from_id = s.id
    WHERE r.user_id = $1 AND r.relation_type = 'follows'
    UNION
    SELECT r.from_id FROM memory.relations r JOIN seed s ON r.to_id = s.id
    WHERE r.user_id = $1 AND r.relation_type = 'follows'
), hop2 AS (
    SELECT r.to_id AS id FROM memory.relations r JOIN hop1 h ON r.from_id = h.id
    WHERE r.user_id = $1 AND r.relation_type = 'follows'
    UNION
    SELECT r.from_id FROM memory.relations r JOIN hop1 h ON r.to_id = h.id
    WHERE r.user_id = $1 AND r.relation_type = 'follows'
), pool AS (
    SELECT id FROM seed UNION SELECT id FROM hop1 UNION SELECT id FROM hop2
), rows AS (
    SELECT i.*
    FROM pool p JOIN memory.items i ON i.user_id = $1 AND i.id = p.id
    WHERE i.state = 'active' {filters}
), tstats AS MATERIALIZED (  -- once: inlined, it was re-aggregated for every scored term row
    SELECT count(*)::float8 AS n, greatest(avg(len), 1)::float8 AS avglen FROM memory.thread_corpus WHERE user_id = $1
), qtt AS MATERIALIZED (
    -- The tenant's thread-term rows of the query's lexemes, read once through the lexeme index.
    -- (Looked up per pool thread instead, the planner read each thread's every term and filtered:
    -- 18 threads x 600 rows, 4.5 of a 24 ms statement at a million memories.)
    SELECT thread_id, lexeme, tf FROM memory.thread_terms WHERE user_id = $1 AND lexeme = ANY($4::text[])
), tbm25 AS MATERIALIZED (  -- once, not once per row of the join below (measured: 335 times, 360 ms)
    SELECT tt.thread_id,
           sum(ln(1 + (ts.n - d.df + 0.5) / (d.df + 0.5)) * tt.tf * 1.9
               / (tt.tf + 0.9 * (0.6 + 0.4 * tc.len / ts.avglen))) AS score
    FROM qtt tt
    JOIN memory.thread_corpus tc ON tc.user_id = $1 AND tc.thread_id = tt.thread_id
    JOIN (SELECT lexeme, count(*)::float8 AS df FROM qtt GROUP BY lexeme) d ON d.lexeme = tt.lexeme
    CROSS JOIN tstats ts
    WHERE tt.thread_id IN (SELECT DISTINCT thread_id FROM rows WHERE thread_id IS NOT NULL)
    GROUP BY tt.thread_id
)
SELECT r.id::text, r.category, r.text, r.content, r.importance, r.pinned, r.tags, r.metadata,
       to_char(r.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       extract(epoch FROM now() - r.updated_at)::float8 / 86400,
       r.thread_id, r.actor_id,
       {similarity},
       coalesce((SELECT sum(q.idf * coalesce(array_length(u.positions, 1), 1) * 1.9
                            / (coalesce(array_length(u.positions, 1), 1) + 0.9 * (0.6 + 0.4 * (length(r.tsv) - 1) / s.avglen)))
                 FROM unnest(r.tsv) u JOIN qterms q ON q.lexeme = u.lexeme CROSS JOIN stats s), 0)::float8,
       coalesce(t.score, 0)::float8
FROM rows r LEFT JOIN tbm25 t ON t.thread_id = r.thread_id
