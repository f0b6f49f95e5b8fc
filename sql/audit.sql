-- memory_export_rows(user_id) -> table (section text, record jsonb): memory_export as a stream of
-- rows, one per stored row, in the same sections and order. memory_export builds one jsonb
-- document, which Postgres caps at 256 MB of JSON (54000 beyond); this has no such cap: a
-- driver reads it with a cursor, psql with \copy, and a tenant of any size can be exported.
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
-- PL/pgSQL with the tenant in a variable, not SQL with it in a CTE: Citus routes each part to
-- the tenant's shard only by a value it can see, and plans no SQL function with parameters
-- (docs/citus.md).
CREATE FUNCTION memory_export_rows(user_id text DEFAULT NULL)
RETURNS TABLE (section text, record jsonb)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    tenant text := memory.resolve_tenant(memory_export_rows.user_id);
BEGIN
    RETURN QUERY
    SELECT s, r FROM (
        SELECT 1 AS o, 'agents' AS s, to_jsonb(a) - 'user_id' AS r, row_number() OVER (ORDER BY a.agent_id) AS n
        FROM memory.agents a WHERE a.user_id = tenant
        UNION ALL
        SELECT 2, 'blocks', to_jsonb(b) - 'user_id', row_number() OVER (ORDER BY b.agent_id, b.label)
        FROM memory.blocks b WHERE b.user_id = tenant
        UNION ALL
        SELECT 3, 'threads', to_jsonb(t) - 'user_id', row_number() OVER (ORDER BY t.thread_id)
        FROM memory.threads t WHERE t.user_id = tenant
        UNION ALL
        SELECT 4, 'messages', to_jsonb(m) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY m.thread_id, m.seq)
        FROM memory.messages m WHERE m.user_id = tenant
        UNION ALL
        SELECT 5, 'memories', to_jsonb(i) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY i.created_at, i.id)
        FROM memory.items i WHERE i.user_id = tenant
        UNION ALL
        SELECT 6, 'relations', to_jsonb(r) - 'user_id', row_number() OVER (ORDER BY r.created_at, r.id)
        FROM memory.relations r WHERE r.user_id = tenant
        UNION ALL
        SELECT 7, 'history', to_jsonb(h) - 'user_id', row_number() OVER (ORDER BY h.ts, h.id)
        FROM memory.history h WHERE h.user_id = tenant
        UNION ALL
        SELECT 8, 'categories', to_jsonb(c) - 'user_id', row_number() OVER (ORDER BY c.name)
        FROM memory.categories c WHERE c.user_id = tenant
        UNION ALL
        SELECT 9, 'allowlists', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.agent, l.category)
        FROM memory.allowlists l WHERE l.user_id = tenant
        UNION ALL
        SELECT 10, 'checkpoints', to_jsonb(k) - 'user_id', row_number() OVER (ORDER BY k.thread_id)
        FROM memory.checkpoints k WHERE k.user_id = tenant
        UNION ALL
        SELECT 11, 'details', to_jsonb(d) - 'user_id'
                              || jsonb_build_object('content', (SELECT coalesce(string_agg(c.content, '' ORDER BY c.n), '')
                                                                FROM memory.detail_chunks c
                                                                WHERE c.user_id = d.user_id AND c.key = d.key)),
               row_number() OVER (ORDER BY d.key)
        FROM memory.details d WHERE d.user_id = tenant
        UNION ALL
        SELECT 12, 'files', to_jsonb(f) - 'user_id' - 'embedding' - 'tsv', row_number() OVER (ORDER BY f.path)
        FROM memory.files f WHERE f.user_id = tenant
        UNION ALL
        SELECT 13, 'events', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.ts, e.id)
        FROM memory.events e WHERE e.user_id = tenant
        UNION ALL
        SELECT 14, 'proposals', to_jsonb(p) - 'user_id', row_number() OVER (ORDER BY p.created_at, p.id)
        FROM memory.proposals p WHERE p.user_id = tenant
        UNION ALL
        SELECT 15, 'store_items', to_jsonb(s) - 'user_id', row_number() OVER (ORDER BY s.namespace, s.key)
        FROM memory.store_items s WHERE s.user_id = tenant
        UNION ALL
        -- A vector the caller computed (model 'client') goes with its text (0.13.0): nothing
        -- here could make it again. The others the backfill makes with the active model.
        SELECT 16, 'store_vectors', to_jsonb(v) - 'user_id'
               - CASE WHEN v.embedding_model = 'client' THEN '{}'::text[] ELSE '{embedding,embedding_model}'::text[] END,
               row_number() OVER (ORDER BY v.namespace, v.key, v.field)
        FROM memory.store_vectors v WHERE v.user_id = tenant
        UNION ALL
        SELECT 17, 'checkpoint_steps', to_jsonb(c) - 'user_id',
               row_number() OVER (ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id)
        FROM memory.checkpoint_steps c WHERE c.user_id = tenant
        UNION ALL
        SELECT 18, 'checkpoint_blobs', to_jsonb(b) - 'user_id',
               row_number() OVER (ORDER BY b.thread_id, b.checkpoint_ns, b.channel, b.version)
        FROM memory.checkpoint_blobs b WHERE b.user_id = tenant
        UNION ALL
        SELECT 19, 'checkpoint_writes', to_jsonb(w) - 'user_id',
               row_number() OVER (ORDER BY w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx)
        FROM memory.checkpoint_writes w WHERE w.user_id = tenant
        UNION ALL
        SELECT 20, 'entities', to_jsonb(e) - 'user_id', row_number() OVER (ORDER BY e.created_at, e.id)
        FROM memory.entities e WHERE e.user_id = tenant
        UNION ALL
        SELECT 21, 'entity_links', to_jsonb(l) - 'user_id', row_number() OVER (ORDER BY l.entity_id, l.item_id)
        FROM memory.entity_links l WHERE l.user_id = tenant
        UNION ALL
        SELECT 22, 'entity_relations', to_jsonb(r) - 'user_id',
               row_number() OVER (ORDER BY r.subject_id, r.relation, r.object_id, r.item_id)
        FROM memory.entity_relations r WHERE r.user_id = tenant
        UNION ALL
        -- Blocks attached to the tenant's agents (0.13.0, block_attach): the tenant's own blocks
        -- and its spaces' (an import into another tenant keeps only its own, memory._import_row).
        SELECT 23, 'block_attachments', to_jsonb(a) - 'user_id',
               row_number() OVER (ORDER BY a.agent_id, a.attached_at, a.block_id)
        FROM memory.block_attachments a WHERE a.user_id = tenant
        UNION ALL
        -- Summaries the worker keeps (0.13.0) and their versions.
        SELECT 24, 'summaries', to_jsonb(s) - 'user_id', row_number() OVER (ORDER BY s.name)
        FROM memory.summaries s WHERE s.user_id = tenant
        UNION ALL
        SELECT 25, 'summary_versions', to_jsonb(v) - 'user_id', row_number() OVER (ORDER BY v.name, v.version)
        FROM memory.summary_versions v WHERE v.user_id = tenant
        UNION ALL
        -- The tenant's settings (0.13.0): its default language.
        SELECT 26, 'settings', to_jsonb(s) - 'user_id', 1
        FROM memory.settings s WHERE s.user_id = tenant
    ) x
    ORDER BY o, n;
END
$$;
