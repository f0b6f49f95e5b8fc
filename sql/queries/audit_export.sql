-- memory_export($1 user_id): every row of the tenant, by table, in a stable order.
SELECT jsonb_build_object(
    'user_id', $1::text,
    'exported_at', now(),
    'agents', (SELECT coalesce(jsonb_agg(to_jsonb(a) - 'user_id' ORDER BY a.agent_id), '[]') FROM memory.agents a WHERE a.user_id = $1),
    'blocks', (SELECT coalesce(jsonb_agg(to_jsonb(b) - 'user_id' ORDER BY b.agent_id, b.label), '[]') FROM memory.blocks b WHERE b.user_id = $1),
    'threads', (SELECT coalesce(jsonb_agg(to_jsonb(t) - 'user_id' ORDER BY t.thread_id), '[]') FROM memory.threads t WHERE t.user_id = $1),
    'messages', (SELECT coalesce(jsonb_agg(to_jsonb(m) - 'user_id' - 'embedding' - 'tsv' ORDER BY m.thread_id, m.seq), '[]') FROM memory.messages m WHERE m.user_id = $1),
    'memories', (SELECT coalesce(jsonb_agg(to_jsonb(i) - 'user_id' - 'embedding' - 'tsv' ORDER BY i.created_at, i.id), '[]') FROM memory.items i WHERE i.user_id = $1),
    'relations', (SELECT coalesce(jsonb_agg(to_jsonb(r) - 'user_id' ORDER BY r.created_at, r.id), '[]') FROM memory.relations r WHERE r.user_id = $1),
    'history', (SELECT coalesce(jsonb_agg(to_jsonb(h) - 'user_id' ORDER BY h.ts, h.id), '[]') FROM memory.history h WHERE h.user_id = $1),
    'categories', (SELECT coalesce(jsonb_agg(to_jsonb(c) - 'user_id' ORDER BY c.name), '[]') FROM memory.categories c WHERE c.user_id = $1),
    'allowlists', (SELECT coalesce(jsonb_agg(to_jsonb(l) - 'user_id' ORDER BY l.agent, l.category), '[]') FROM memory.allowlists l WHERE l.user_id = $1),
    'checkpoints', (SELECT coalesce(jsonb_agg(to_jsonb(k) - 'user_id' ORDER BY k.thread_id), '[]') FROM memory.checkpoints k WHERE k.user_id = $1),
    'details', (SELECT coalesce(jsonb_agg(to_jsonb(d) - 'user_id'
                                          || jsonb_build_object('content', (SELECT coalesce(string_agg(c.content, '' ORDER BY c.n), '')
                                                                            FROM memory.detail_chunks c
                                                                            WHERE c.user_id = d.user_id AND c.key = d.key))
                                          ORDER BY d.key), '[]')
                FROM memory.details d WHERE d.user_id = $1),
    'files', (SELECT coalesce(jsonb_agg(to_jsonb(f) - 'user_id' - 'embedding' - 'tsv' ORDER BY f.path), '[]') FROM memory.files f WHERE f.user_id = $1),
    'events', (SELECT coalesce(jsonb_agg(to_jsonb(e) - 'user_id' ORDER BY e.ts, e.id), '[]') FROM memory.events e WHERE e.user_id = $1),
    'proposals', (SELECT coalesce(jsonb_agg(to_jsonb(p) - 'user_id' ORDER BY p.created_at, p.id), '[]') FROM memory.proposals p WHERE p.user_id = $1),
    'store_items', (SELECT coalesce(jsonb_agg(to_jsonb(s) - 'user_id' ORDER BY s.namespace, s.key), '[]') FROM memory.store_items s WHERE s.user_id = $1),
    -- A caller's own vector (model 'client') goes with its text: nothing here could make it again.
    'store_vectors', (SELECT coalesce(jsonb_agg(to_jsonb(v) - 'user_id'
                                                - CASE WHEN v.embedding_model = 'client' THEN '{}'::text[] ELSE '{embedding,embedding_model}'::text[] END
                                                ORDER BY v.namespace, v.key, v.field), '[]') FROM memory.store_vectors v WHERE v.user_id = $1),
    'checkpoint_steps', (SELECT coalesce(jsonb_agg(to_jsonb(c) - 'user_id' ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id), '[]') FROM memory.checkpoint_steps c WHERE c.user_id = $1),
    'checkpoint_blobs', (SELECT coalesce(jsonb_agg(to_jsonb(b) - 'user_id' ORDER BY b.thread_id, b.checkpoint_ns, b.channel, b.version), '[]') FROM memory.checkpoint_blobs b WHERE b.user_id = $1),
    'checkpoint_writes', (SELECT coalesce(jsonb_agg(to_jsonb(w) - 'user_id' ORDER BY w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx), '[]') FROM memory.checkpoint_writes w WHERE w.user_id = $1),
    'entities', (SELECT coalesce(jsonb_agg(to_jsonb(e) - 'user_id' ORDER BY e.created_at, e.id), '[]') FROM memory.entities e WHERE e.user_id = $1),
    'entity_links', (SELECT coalesce(jsonb_agg(to_jsonb(l) - 'user_id' ORDER BY l.entity_id, l.item_id), '[]') FROM memory.entity_links l WHERE l.user_id = $1)
) || jsonb_build_object(
    -- (A second object: jsonb_build_object takes at most 100 arguments.)
    'entity_relations', (SELECT coalesce(jsonb_agg(to_jsonb(r) - 'user_id' ORDER BY r.subject_id, r.relation, r.object_id, r.item_id), '[]')
                         FROM memory.entity_relations r WHERE r.user_id = $1),
    -- Blocks attached to the tenant's agents (block_attach, 0.13.0).
    'block_attachments', (SELECT coalesce(jsonb_agg(to_jsonb(a) - 'user_id' ORDER BY a.agent_id, a.attached_at, a.block_id), '[]')
                          FROM memory.block_attachments a WHERE a.user_id = $1),
    -- Summaries the worker keeps and their versions (0.13.0).
    'summaries', (SELECT coalesce(jsonb_agg(to_jsonb(s) - 'user_id' ORDER BY s.name), '[]')
                  FROM memory.summaries s WHERE s.user_id = $1),
    'summary_versions', (SELECT coalesce(jsonb_agg(to_jsonb(v) - 'user_id' ORDER BY v.name, v.version), '[]')
                         FROM memory.summary_versions v WHERE v.user_id = $1),
    -- The tenant's settings (0.13.0): its default language.
    'settings', (SELECT coalesce(jsonb_agg(to_jsonb(s) - 'user_id'), '[]')
                 FROM memory.settings s WHERE s.user_id = $1)
)
