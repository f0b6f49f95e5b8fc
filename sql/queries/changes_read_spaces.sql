-- sql/queries/changes_read.sql over the caller's own changes and those of the spaces granted to
-- it, in one feed order; each change from a space names it. (Not on Citus, where spaces are not
-- offered: this statement is not routed to one shard.)
-- $1 the owners (the caller first, then its spaces' keys), $2 the cursor's xid, $3 its seq,
-- $4 how many.
SELECT c.xid::text, c.seq,
       jsonb_build_object('entity', c.entity, 'id', c.id, 'op', c.op, 'revision', r.n, 'at', c.at)
       || CASE WHEN c.user_id LIKE 'space:%' THEN jsonb_build_object('space', substr(c.user_id, 7))
               ELSE '{}'::jsonb END
FROM (SELECT * FROM memory.changes
      WHERE user_id = ANY($1)
        AND (xid, seq) > ($2::text::xid8, $3)
        AND xid < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY xid, seq
      LIMIT $4) c
CROSS JOIN LATERAL (SELECT count(*) AS n FROM memory.changes o
                    WHERE o.user_id = c.user_id AND o.entity = c.entity AND o.id = c.id
                      AND (o.xid, o.seq) <= (c.xid, c.seq)) r
ORDER BY c.xid, c.seq
