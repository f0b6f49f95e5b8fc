-- The tenant's webhooks as the gateway keeps them (src/webhook.rs): where each has got to in
-- the change feed, and the dead letters, newest first. $1 tenant.
SELECT jsonb_build_object(
    'cursors', (SELECT coalesce(jsonb_agg(jsonb_build_object('hook', c.hook, 'cursor', c.cursor, 'updated_at', c.updated_at)
                                          ORDER BY c.hook), '[]')
                FROM memory.webhook_cursors c WHERE c.user_id = $1::text),
    'dead', (SELECT coalesce(jsonb_agg(jsonb_build_object('hook', d.hook, 'type', d.body ->> 'type',
                                                          'delivery_id', d.delivery_id, 'attempts', d.attempts,
                                                          'last_error', d.last_error, 'failed_at', d.failed_at)
                                       ORDER BY d.failed_at DESC), '[]')
             FROM (SELECT * FROM memory.webhook_dead WHERE user_id = $1::text ORDER BY failed_at DESC LIMIT 500) d)
)::text
