-- Statistics (0.12.0, docs/api.md "Statistics"): what the memory holds and what the background
-- work is doing, for the people who run it. memory_overview is one tenant's page of it (the
-- inspector's overview, crates/memory_gateway/src/inspect/); memory.stats is every tenant's, for
-- the operator's monitoring (postgres_exporter, docs/monitoring/).

-- The worker's jobs without their error texts: a job runs for every tenant, so its last error
-- may name another tenant's rows. SECURITY DEFINER: tenants cannot read memory.worker_jobs.
CREATE FUNCTION memory._worker_summary()
RETURNS TABLE (job text, scheduled boolean, last_finished_at timestamptz, last_duration_ms double precision,
               runs bigint, failures bigint, last_error_at timestamptz, requested_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT n.job,
           n.job = ANY (string_to_array(replace(lower(current_setting('memory_ext.worker_jobs', true)), ' ', ''), ',')),
           j.last_finished_at, j.last_duration_ms, coalesce(j.runs, 0), coalesce(j.failures, 0),
           j.last_error_at, j.requested_at
    FROM unnest(memory._worker_job_names()) AS n(job)
    LEFT JOIN memory.worker_jobs j ON j.job = n.job
    ORDER BY n.job
$$;

-- memory_overview(user_id) -> jsonb: the tenant's memory at a glance, in one call (one scan of
-- its memories, grouped every way at once). SECURITY INVOKER: row-level security applies; a
-- user_id other than the current tenant is 42501. PL/pgSQL: Citus plans no SQL function with
-- parameters (docs/citus.md).
CREATE FUNCTION memory_overview(user_id text DEFAULT NULL, days integer DEFAULT 30)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    tenant text := memory.resolve_tenant(memory_overview.user_id);
    since  date;
    groups jsonb;
    item_backlog bigint;
    result jsonb;
BEGIN
    IF days IS NULL OR days < 1 OR days > 366 THEN
        RAISE EXCEPTION 'days must be between 1 and 366, not %', days USING ERRCODE = '22023';
    END IF;
    since := (now() AT TIME ZONE 'UTC')::date - (days - 1);
    -- Every count of the memories from one pass over them (at 100,000 memories a pass is about
    -- 100 ms: the overview makes one).
    SELECT jsonb_build_object(
               'total', coalesce(sum(n) FILTER (WHERE g = 15), 0),
               'by_state', coalesce(jsonb_object_agg(state, n) FILTER (WHERE g = 7), '{}'),
               'by_kind', coalesce(jsonb_object_agg(kind, n) FILTER (WHERE g = 11), '{}'),
               'active_by_kind', coalesce(jsonb_object_agg(kind, active) FILTER (WHERE g = 11 AND active > 0), '{}'),
               'by_category', coalesce(jsonb_agg(jsonb_build_object('category', category, 'n', n)
                                                 ORDER BY n DESC, category) FILTER (WHERE g = 13), '[]'),
               'per_day', coalesce(jsonb_agg(jsonb_build_object('day', day, 'n', n) ORDER BY day)
                                   FILTER (WHERE g = 14 AND day >= since), '[]')),
           coalesce(sum(unembedded) FILTER (WHERE g = 15), 0)
      INTO groups, item_backlog
    FROM (SELECT GROUPING(i.state, i.kind, i.category, (i.created_at AT TIME ZONE 'UTC')::date) AS g,
                 i.state, i.kind, coalesce(i.category, '') AS category,
                 (i.created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n,
                 count(*) FILTER (WHERE i.state = 'active') AS active,
                 count(*) FILTER (WHERE i.state = 'active' AND i.embedding IS NULL) AS unembedded
          FROM memory.items i
          WHERE i.user_id = tenant
          GROUP BY GROUPING SETS ((), (i.state), (i.kind),
                                  (i.category) , ((i.created_at AT TIME ZONE 'UTC')::date))) s;
    -- Every day of the period, the days without a memory as 0 (a chart's gaps are days). Days
    -- compared as dates: a jsonb date is ISO text whatever the session's DateStyle.
    groups := jsonb_set(groups, '{per_day}', (
        SELECT jsonb_agg(jsonb_build_object('day', d.day, 'n',
                   coalesce((SELECT (x ->> 'n')::bigint FROM jsonb_array_elements(groups -> 'per_day') x
                             WHERE (x ->> 'day')::date = d.day), 0)) ORDER BY d.day)
        FROM (SELECT g::date AS day
              FROM generate_series(since::timestamp, (now() AT TIME ZONE 'UTC')::date::timestamp, interval '1 day') g) d));
    result := jsonb_build_object(
        'user_id', tenant,
        'days', days,
        'memories', groups,
        'threads', (SELECT coalesce(jsonb_agg(t ORDER BY t.updated_at DESC, t.thread_id), '[]') FROM
            (SELECT th.thread_id, th.agent_id, th.updated_at, th.revision, th.last_seq AS messages,
                    c.context_tokens, c.context_messages
             FROM (SELECT * FROM memory.threads th WHERE th.user_id = tenant
                   ORDER BY th.updated_at DESC, th.thread_id LIMIT 20) th,
                  LATERAL (SELECT coalesce(sum(m.token_count), 0) AS context_tokens, count(*) AS context_messages
                           FROM memory.messages m
                           WHERE m.user_id = tenant AND m.thread_id = th.thread_id AND m.in_context) c) t),
        'proposals_pending', (SELECT count(*) FROM memory.proposals p
                              WHERE p.user_id = tenant AND p.status = 'pending' AND p.expires_at > now()),
        'embedding', jsonb_build_object(
            'backlog', jsonb_build_object(
                'item', item_backlog,
                'message', (SELECT count(*) FROM memory.messages m
                            WHERE m.user_id = tenant AND m.embedding IS NULL),
                'file', (SELECT count(*) FROM memory.files f
                         WHERE f.user_id = tenant AND f.embedding IS NULL)),
            'failures', (SELECT jsonb_build_object('retrying', count(*) FILTER (WHERE NOT f.gave_up),
                                                   'gave_up', count(*) FILTER (WHERE f.gave_up))
                         FROM memory.embedding_failures f WHERE f.user_id = tenant),
            'recent_failures', (SELECT coalesce(jsonb_agg(f ORDER BY f.last_attempt_at DESC), '[]') FROM
                (SELECT f.target, f.row_id, f.attempts, f.gave_up, f.last_error, f.last_attempt_at
                 FROM memory.embedding_failures f WHERE f.user_id = tenant
                 ORDER BY f.last_attempt_at DESC LIMIT 5) f)),
        'extraction', (SELECT jsonb_build_object(
                           'threads_failing', count(*) FILTER (WHERE e.last_error IS NOT NULL),
                           'last_run_at', max(e.last_run_at),
                           'errors', coalesce(jsonb_agg(jsonb_build_object('thread_id', e.thread_id,
                                                                           'last_error', e.last_error,
                                                                           'attempts', e.attempts))
                                              FILTER (WHERE e.last_error IS NOT NULL), '[]'))
                       FROM memory.extractions e WHERE e.user_id = tenant),
        'runs_waiting', (SELECT count(*) FROM memory.run_ends r WHERE r.user_id = tenant),
        'llm_usage', (SELECT coalesce(jsonb_agg(u ORDER BY u.day), '[]') FROM
            (SELECT d.day, coalesce(x.calls, 0) AS extraction_calls, coalesce(x.tokens_in, 0) AS tokens_in,
                    coalesce(x.tokens_out, 0) AS tokens_out, coalesce(x.writes, 0) AS extraction_writes,
                    coalesce(c.llm_calls, 0) AS consolidation_calls
             FROM (SELECT DISTINCT day FROM (
                       SELECT x.day FROM memory.extraction_usage x WHERE x.user_id = tenant AND x.day >= since
                       UNION SELECT c.day FROM memory.consolidation_usage c WHERE c.user_id = tenant AND c.day >= since) a) d
             LEFT JOIN memory.extraction_usage x ON x.user_id = tenant AND x.day = d.day
             LEFT JOIN memory.consolidation_usage c ON c.user_id = tenant AND c.day = d.day) u),
        'events', (SELECT coalesce(jsonb_agg(e ORDER BY e.ts DESC), '[]') FROM
            (SELECT e.ts, e.node, e.op, e.status, e.thread_id, e.memory_id, e.category, e.sqlstate, e.actor
             FROM memory.events e WHERE e.user_id = tenant ORDER BY e.ts DESC LIMIT 20) e));
    -- Apart: the worker's table is not the tenant's (on Citus, a local table beside the
    -- distributed ones).
    RETURN result || jsonb_build_object('worker',
        (SELECT coalesce(jsonb_agg(w ORDER BY w.job), '[]') FROM memory._worker_summary() w));
END
$$;

-- memory.stats() -> rows (tenant, metric, label, value): every tenant's statistics, for an
-- operator's monitoring; postgres_exporter reads it with docs/monitoring/queries.yaml. Rows with
-- tenant '' are the database's (the worker's jobs, dead rows). SECURITY DEFINER, executable by
-- the extension's owner only (it reads across tenants): grant it to the monitoring role.
CREATE FUNCTION memory.stats()
RETURNS TABLE (tenant text, metric text, label text, value double precision)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT i.user_id, 'memories', i.state, count(*)::float8
    FROM memory.items i GROUP BY i.user_id, i.state
    UNION ALL
    SELECT i.user_id, 'embedding_backlog', 'item', count(*)::float8
    FROM memory.items i WHERE i.state = 'active' AND i.embedding IS NULL GROUP BY i.user_id
    UNION ALL
    SELECT m.user_id, 'embedding_backlog', 'message', count(*)::float8
    FROM memory.messages m WHERE m.embedding IS NULL GROUP BY m.user_id
    UNION ALL
    SELECT f.user_id, 'embedding_backlog', 'file', count(*)::float8
    FROM memory.files f WHERE f.embedding IS NULL GROUP BY f.user_id
    UNION ALL
    SELECT f.user_id, 'embedding_failures', CASE WHEN f.gave_up THEN 'gave_up' ELSE 'retrying' END, count(*)::float8
    FROM memory.embedding_failures f GROUP BY 1, 3
    UNION ALL
    SELECT p.user_id, 'proposals_pending', p.policy, count(*)::float8
    FROM memory.proposals p WHERE p.status = 'pending' AND p.expires_at > now() GROUP BY 1, 3
    UNION ALL
    SELECT r.user_id, 'runs_waiting', '', count(*)::float8 FROM memory.run_ends r GROUP BY 1
    UNION ALL
    SELECT e.user_id, 'extraction_threads_failing', '', count(*)::float8
    FROM memory.extractions e WHERE e.last_error IS NOT NULL GROUP BY 1
    UNION ALL
    SELECT x.user_id, 'llm_tokens_today', v.label, v.value
    FROM memory.extraction_usage x,
         LATERAL (VALUES ('in', x.tokens_in::float8), ('out', x.tokens_out::float8),
                         ('extraction_calls', x.calls::float8), ('extraction_writes', x.writes::float8)) v(label, value)
    WHERE x.day = (now() AT TIME ZONE 'UTC')::date
    UNION ALL
    SELECT c.user_id, 'llm_tokens_today', 'consolidation_calls', c.llm_calls::float8
    FROM memory.consolidation_usage c WHERE c.day = (now() AT TIME ZONE 'UTC')::date
    UNION ALL
    -- Each job's seconds since it last finished (lag; -1 for a job that never ran) and failures.
    SELECT '', v.metric, w.job, v.value
    FROM memory._worker_summary() w,
         LATERAL (VALUES ('worker_job_lag_seconds', coalesce(extract(epoch FROM now() - w.last_finished_at)::float8, -1)),
                         ('worker_job_failures', w.failures::float8)) v(metric, value)
    UNION ALL
    -- The last error's text in the label (cut to 200 characters), its time as the value.
    SELECT '', 'worker_job_last_error', j.job || ': ' || left(regexp_replace(j.last_error, '\s+', ' ', 'g'), 200),
           extract(epoch FROM j.last_error_at)::float8
    FROM memory.worker_jobs j WHERE j.last_error IS NOT NULL
    UNION ALL
    SELECT '', 'dead_rows', s.relname::text, s.n_dead_tup::float8
    FROM pg_catalog.pg_stat_all_tables s WHERE s.schemaname = 'memory'
$$;
REVOKE ALL ON FUNCTION memory.stats() FROM PUBLIC;
