-- The access queue folded into the memories, by the worker at each look for work
-- (src/worker/jobs.rs): every read waiting in memory.access_queue taken out and counted on the
-- memories it returned, in one statement, so that a read is counted once, or, when the
-- statement fails (a lock timeout), stays queued for the next fold. $1 a tenant, or NULL for all.
-- The rule sql/queries/access_record.sql follows at read time holds here too: a memory counts
-- at most one retrieval a minute (one per clock minute among the queued reads, none within a
-- minute of the last one counted), as what reads last_accessed_at counts in days and
-- access_count is a relative measure. Reads of memories deleted since find no row and go.
-- Returns the reads taken and the memories written.
WITH taken AS (
    DELETE FROM memory.access_queue q
    WHERE $1::text IS NULL OR q.user_id = $1::text
    RETURNING q.user_id, q.ids, q.read_at
), counted AS (
    SELECT t.user_id, r.id, max(t.read_at) AS last_read,
           count(DISTINCT date_trunc('minute', t.read_at))
               FILTER (WHERE i.access_count = 0 OR t.read_at >= i.last_accessed_at + interval '1 minute')
               AS minutes
    FROM taken t
    CROSS JOIN LATERAL unnest(t.ids) AS r(id)
    JOIN memory.items i ON i.user_id = t.user_id AND i.id = r.id
    GROUP BY t.user_id, r.id
), written AS (
    UPDATE memory.items i
    SET last_accessed_at = c.last_read, access_count = i.access_count + c.minutes
    FROM counted c
    WHERE i.user_id = c.user_id AND i.id = c.id AND c.minutes > 0
    RETURNING 1
)
SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM written)
