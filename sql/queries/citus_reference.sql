-- memory_citus_distribute (src/ops/citus.rs): the tables every node needs whole, made Citus
-- reference tables when they are not yet, in this order (a grant references its space): the
-- embedding model registry (no user_id; every shard's vectors are described by it), and the
-- spaces and their grants, which the row policies read on the worker that runs a statement
-- (src/pg/spaces.rs, docs/citus.md "Spaces").
SELECT t FROM unnest(ARRAY['memory.embedding_models', 'memory.spaces', 'memory.grants']) WITH ORDINALITY AS r(t, n)
WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = t::regclass)
ORDER BY n
