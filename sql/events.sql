-- memory.event_counts: operational events (docs/design.md "Operational events") counted per tenant, hour, node, op and
-- status — "basic counts by op/node over time". security_invoker: the view reads memory.events
-- as the caller, so row-level security shows a tenant only its own counts.
CREATE VIEW memory.event_counts WITH (security_invoker = true) AS
SELECT user_id,
       date_trunc('hour', ts) AS hour,
       node,
       op,
       status,
       count(*) AS events,
       avg(sim)::real AS avg_sim
FROM memory.events
GROUP BY user_id, date_trunc('hour', ts), node, op, status;

COMMENT ON VIEW memory.event_counts IS
    'memory_ext: operational events per tenant, hour, node, op and status (docs/design.md, Operational events)';
GRANT SELECT ON memory.event_counts TO PUBLIC;
