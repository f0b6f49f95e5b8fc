-- One summary of the tenant: memory_summaries()'s entry for it, its earlier versions newest
-- first (an erased one without its text: history keeps that it was, not what it said), and the
-- memories its answer rests on. NULL when the tenant has no summary of that name. $1 tenant,
-- $2 name.
SELECT jsonb_build_object(
    'summary', s,
    'versions', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                        'version', v.version, 'answer', v.answer, 'method', v.method,
                        'evidence', jsonb_array_length(to_jsonb(v.evidence)), 'erased', v.erased,
                        'created_at', v.created_at) ORDER BY v.version DESC), '[]')
                 FROM memory.summary_versions v WHERE v.user_id = $1::text AND v.name = $2::text),
    'evidence', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'text', i.text, 'state', i.state)
                                          ORDER BY i.happened_at), '[]')
                 FROM memory.items i
                 WHERE i.user_id = $1::text
                   AND i.id IN (SELECT e::uuid FROM jsonb_array_elements_text(s -> 'evidence') e))
)::text
FROM jsonb_array_elements(memory_summaries()) s
WHERE s ->> 'name' = $2::text
