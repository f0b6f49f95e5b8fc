-- A block attached to an agent (block_attach), as compile_core_blocks shows it; nothing when the
-- caller can no longer read it (row-level security: its space was revoked). $1 the block's
-- owner, $2 its id.
SELECT jsonb_build_object('label', b.label, 'description', b.description, 'value', b.value,
                          'char_limit', b.char_limit, 'read_only', b.read_only)
FROM memory.blocks b WHERE b.user_id = $1 AND b.id = $2::uuid
