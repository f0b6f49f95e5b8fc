-- memory_citus_distribute (src/ops/citus.rs): every registered model, whose HNSW indexes it
-- makes where missing. A model registered on one node before distributing has them already
-- (distributing carries them to the shards); one registered by 0.6.0 or 0.7.0 on a coordinator
-- has none (sql/embed.sql says why). Read here, made on this node: a call in this statement
-- could run on the worker holding the registry's placement, which makes none.
SELECT model_id, dims, index_type FROM memory.embedding_models ORDER BY model_id
