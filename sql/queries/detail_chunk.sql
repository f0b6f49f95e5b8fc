-- One chunk of a detail's content. $1 user_id, $2 key, $3 its number (from 0), $4 its text.
-- A statement per chunk (a detail has a few: 64 KiB each), not one INSERT ... SELECT over all
-- of them: Citus runs an INSERT ... SELECT that it cannot push to one shard through COPY, which
-- row-level security refuses (docs/citus.md).
INSERT INTO memory.detail_chunks (user_id, key, n, content) VALUES ($1, $2, $3, $4)
