-- One summary as memory_summary_get and memory_summaries show it (docs/api.md "Summaries").
-- `stale` is also true when a memory the answer rests on is no longer active or changed after
-- the answer was written: read here, by primary key, so that a superseded fact shows at once,
-- before the worker has looked. $1 tenant, $2 name (NULL: every summary, by name). (A count
-- against the array's length, with the tenant written out: Citus plans neither a correlated
-- subquery over unnest() nor one it cannot route to the tenant's shards.)
SELECT jsonb_build_object(
           'name', s.name, 'question', s.question, 'scope', s.scope, 'builtin', s.builtin,
           'answer', s.answer, 'evidence', to_jsonb(s.evidence), 'method', s.method,
           'version', s.version,
           'stale', s.stale OR (SELECT count(*) FROM memory.items i
                                WHERE i.user_id = $1 AND i.id = ANY (s.evidence) AND i.state = 'active'
                                  AND i.updated_at <= s.refreshed_at) < cardinality(s.evidence),
           'stale_since', s.stale_since, 'refreshed_at', s.refreshed_at,
           'error', s.last_error)::text
FROM memory.summaries s
WHERE s.user_id = $1 AND ($2::text IS NULL OR s.name = $2) AND NOT s.disabled
ORDER BY s.name
