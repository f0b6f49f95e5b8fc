-- memory_ext 0.8.0 -> 0.9.0 (ALTER EXTENSION memory_ext UPDATE TO '0.9.0')
--
-- The surfaces agents touch (docs/api.md "Agent tools", "Consent", "Limits"):
-- - memory.events gains `sqlstate`: a tool call's error is told to the model in words, and the
--   SQLSTATE it came from is kept here.
--
-- On Citus, run ALTER EXTENSION on the coordinator: Citus runs it on every node.
ALTER TABLE memory.events ADD COLUMN sqlstate text;

-- The queue of ended runs is the worker's: a tenant enqueues only through run_end (which writes
-- it as the owner) and reads its own rows; it can no longer set its own retry times.
REVOKE INSERT, UPDATE, DELETE ON memory.run_ends FROM PUBLIC;
