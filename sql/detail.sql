-- memory_ref_store(content, description, type, user_id, thread_id, metadata, agent_id) -> jsonb
-- {key, placeholder, id} (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Detail memory"). A SQL wrapper
-- only so that the argument can be called `type` as the contract says; the work is in Rust
-- (src/api/detail.rs, memory.ref_store).
CREATE FUNCTION memory_ref_store(content text, description text, type text DEFAULT 'command_output',
                                 user_id text DEFAULT NULL, thread_id text DEFAULT NULL,
                                 metadata jsonb DEFAULT '{}', agent_id text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql VOLATILE
AS $$ SELECT memory.ref_store($1, $2, $3, $4, $5, $6, $7) $$;
