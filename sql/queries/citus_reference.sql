-- memory_citus_distribute (src/ops/citus.rs): the tables every node needs whole, made Citus
-- reference tables when they are not yet: the embedding model registry (no user_id; every
-- shard's vectors are described by it).
SELECT t FROM unnest(ARRAY['memory.embedding_models']) t
WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = t::regclass)
