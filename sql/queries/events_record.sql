-- One operational event (src/pg/events.rs). $1 user_id, $2 thread_id, $3 node, $4 op,
-- $5 status, $6 memory_id, $7 category, $8 sim, $9 sqlstate. The actor is who made the call
-- (sql/triggers.sql memory._actor).
INSERT INTO memory.events (user_id, thread_id, node, op, status, memory_id, category, sim, sqlstate, actor)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, memory._actor())
