-- memory_export_rows(user_id) -> table (section text, record jsonb): memory_export as a stream of
-- rows, one per stored row, in the same sections and order. memory_export builds one jsonb
-- document, which Postgres caps at 256 MB of JSON (54000 beyond); this has no such cap: a
-- driver reads it with a cursor, psql with \copy, and a tenant of any size can be exported.
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
CREATE FUNCTION memory_export_rows(user_id text DEFAULT NULL)
RETURNS TABLE (section text, record jsonb)
LANGUAGE sql STABLE
AS $$
    WITH u AS (SELECT memory.resolve_tenant(user_id) AS id)
    SELECT s, r FROM (
        SELECT 1 AS o, 'agents' AS s, to_jsonb(a) - 'user_id' AS r, row_number() OVER (ORDER BY a.agent_id) AS n
        FROM memory.agents a, u WHERE a.user_id = u.id
        UNION ALL
        SELECT 2, 'blocks', to_jsonb(b) - 'user_id', row_number() OVER (ORDER BY b.agent_id, b.label)
        FROM memory.blocks b, u WHERE b.user_id = u.id
        UNION ALL
        SELECT 3, 'threads', to_jsonb(t) - 'user_id', row_number() OVER (ORDER BY t.thread_id)
        FROM memory.threads t, u WHERE t.user_id = u.id
        UNION ALL
        SELECT 4, 'messages', to_jsonb(m) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY m.thread_id, m.seq)
        FROM memory.messages m, u WHERE m.user_id = u.id
        UNION ALL
        SELECT 5, 'memories', to_jsonb(i) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY i.created_at, i.id)
        FROM memory.items i, u WHERE i.user_id = u.id
        UNION ALL
        SELECT 6, 'relations', to_jsonb(r) - 'user_id', row_number() OVER (ORDER BY r.created_at, r.id)
        FROM memory.relations r, u WHERE r.user_id = u.id
        UNION ALL
        SELECT 7, 'history', to_jsonb(h) - 'user_id', row_number() OVER (ORDER BY h.ts, h.id)
        FROM memory.history h, u WHERE h.user_id = u.id
        UNION ALL
        SELECT 8, 'categories', to_jsonb(c) - 'user_id', row_number() OVER (ORDER BY c.name)
        FROM memory.categories c, u WHERE c.user_id = u.id
        UNION ALL
        SELECT 9, 'allowlists', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.agent, l.category)
        FROM memory.allowlists l, u WHERE l.user_id = u.id
        UNION ALL
        SELECT 10, 'checkpoints', to_jsonb(k) - 'user_id', row_number() OVER (ORDER BY k.thread_id)
        FROM memory.checkpoints k, u WHERE k.user_id = u.id
        UNION ALL
        SELECT 11, 'details', to_jsonb(d) - 'user_id'
                              || jsonb_build_object('content', (SELECT coalesce(string_agg(c.content, '' ORDER BY c.n), '')
                                                                FROM memory.detail_chunks c
                                                                WHERE c.user_id = d.user_id AND c.key = d.key)),
               row_number() OVER (ORDER BY d.key)
        FROM memory.details d, u WHERE d.user_id = u.id
        UNION ALL
        SELECT 12, 'files', to_jsonb(f) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY f.path)
        FROM memory.files f, u WHERE f.user_id = u.id
        UNION ALL
        SELECT 13, 'events', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.ts, e.id)
        FROM memory.events e, u WHERE e.user_id = u.id
        UNION ALL
        SELECT 14, 'proposals', to_jsonb(p) - 'user_id', row_number() OVER (ORDER BY p.created_at, p.id)
        FROM memory.proposals p, u WHERE p.user_id = u.id
    ) x
    ORDER BY o, n
$$;
