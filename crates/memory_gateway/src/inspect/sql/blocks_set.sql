-- The inspector's block edit: block_set with the block's own description, limit and
-- read-only flag, only while the block is still the version the form showed (no row
-- otherwise: someone changed it meanwhile). The row is locked before block_set runs, and a
-- concurrent edit that committed first makes the version check fail on the row it left (READ
-- COMMITTED re-reads a locked row), so of two people saving one version only one edit lands.
-- block_set refuses a read-only block (42501) and a value over the limit (22001). $1 tenant,
-- $2 agent, $3 label, $4 value, $5 version shown.
WITH b AS MATERIALIZED (
    SELECT b.agent_id, b.label, b.description, b.char_limit, b.read_only
    FROM memory.blocks b
    WHERE b.user_id = $1::text AND b.agent_id = $2::text AND b.label = $3::text AND b.version = $5::text::int
    FOR UPDATE
)
SELECT block_set(b.agent_id, b.label, $4::text, b.description, b.char_limit, b.read_only)::text FROM b
