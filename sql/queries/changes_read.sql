-- A tenant's changes after a cursor, in feed order, from the part of the feed that is final:
-- transactions older than this snapshot's xmin (sql/changes.sql says why that never skips or
-- repeats). An object's revision is its changes in the feed up to this one (counted with the
-- tenant given as $1 on both sides, not taken from the outer row: so Citus routes the whole
-- statement to the tenant's shard, where it may count in a lateral subquery).
-- $1 user_id, $2 the cursor's xid, $3 its seq, $4 how many.
SELECT c.xid::text, c.seq,
       jsonb_build_object('entity', c.entity, 'id', c.id, 'op', c.op, 'revision', r.n, 'at', c.at)
FROM (SELECT * FROM memory.changes
      WHERE user_id = $1
        AND (xid, seq) > ($2::text::xid8, $3)
        AND xid < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY xid, seq
      LIMIT $4) c
CROSS JOIN LATERAL (SELECT count(*) AS n FROM memory.changes o
                    WHERE o.user_id = $1 AND o.entity = c.entity AND o.id = c.id
                      AND (o.xid, o.seq) <= (c.xid, c.seq)) r
ORDER BY c.xid, c.seq
