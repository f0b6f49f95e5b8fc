-- One past version of a summary (memory_summary_get with a version). $1 tenant, $2 name, $3 version.
SELECT jsonb_build_object(
           'name', v.name, 'question', v.question, 'answer', v.answer, 'evidence', to_jsonb(v.evidence),
           'method', v.method, 'version', v.version, 'erased', v.erased, 'refreshed_at', v.created_at,
           'tokens_in', v.tokens_in, 'tokens_out', v.tokens_out)::text
FROM memory.summary_versions v
WHERE v.user_id = $1 AND v.name = $2 AND v.version = $3
