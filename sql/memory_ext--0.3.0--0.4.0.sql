-- memory_ext 0.3.0 -> 0.4.0 (ALTER EXTENSION memory_ext UPDATE TO '0.4.0')
--
-- What changes: sessions of the OpenAI Agents SDK over recall memory (session_get_items,
-- session_add_items, session_pop_item, session_clear; messages keep the item they were added as,
-- a new nullable column memory.messages.item); context_messages returns what a chat request needs (tool calls, tool call ids,
-- names, times: new columns at the end) and takes optional caps; compile_blocks, the blocks
-- section alone and its hash for prompt caching; agent tools served from SQL (docs/api.md "Agent tools"): memory_tools,
-- memory_tool_call, memory_prompt and memory_tool_allowlist, and the agent-level allowlist they
-- read (a new nullable column, memory.agents.tools: NULL, every tool, for existing agents); an
-- index for tag filters (built on the upgrade). No stored row is rewritten.
-- The fresh-install script of 0.4.0 and this upgrade give the same schema: tests/upgrade checks
-- it, catalog by catalog.

\echo Use "ALTER EXTENSION memory_ext UPDATE TO '0.4.0'" to load this file. \quit

-------------------------------------------------------------------------------- tools
ALTER TABLE memory.agents ADD COLUMN tools text[];
-- Tag filters (memory_query's `filters.tags`, archival_search): see sql/schema.sql.
CREATE INDEX items_tags_idx ON memory.items USING gin (tags) WHERE state = 'active';
SELECT memory._name_partition_indexes('memory.items_tags_idx');

CREATE  FUNCTION "memory_prompt"(
	"agent_id" TEXT, /* Option < & str > */
	"parts" TEXT[] DEFAULT NULL /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS TEXT /* String */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_prompt_wrapper';

CREATE  FUNCTION "memory_tool_allowlist"(
	"agent_id" TEXT, /* Option < & str > */
	"tools" TEXT[] /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_tool_allowlist_wrapper';

CREATE  FUNCTION "memory_tool_call"(
	"agent_id" TEXT, /* Option < & str > */
	"thread_id" TEXT, /* Option < & str > */
	"name" TEXT, /* Option < & str > */
	"arguments" jsonb /* Option < Json > */
) RETURNS jsonb /* JsonB */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_tool_call_wrapper';

CREATE  FUNCTION "memory_tools"(
	"agent_id" TEXT, /* Option < & str > */
	"format" TEXT DEFAULT 'openai', /* Option < & str > */
	"tools" TEXT[] DEFAULT NULL /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS jsonb /* JsonB */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_tools_wrapper';

-------------------------------------------------------------------------------- compaction
-- New result columns and arguments: the function is replaced.
DROP FUNCTION context_messages(text);
CREATE  FUNCTION "context_messages"(
	"thread_id" TEXT, /* Option < & str > */
	"max_messages" INT DEFAULT NULL, /* Option < i32 > */
	"max_tokens" INT DEFAULT NULL /* Option < i32 > */
) RETURNS TABLE (
	"id" uuid,  /* pgrx :: Uuid */
	"seq" bigint,  /* i64 */
	"role" TEXT,  /* String */
	"content" TEXT,  /* String */
	"tokens" INT,  /* i32 */
	"is_summary" bool,  /* bool */
	"tool_calls" jsonb,  /* Option < JsonB > */
	"tool_call_id" TEXT,  /* Option < String > */
	"name" TEXT,  /* Option < String > */
	"created_at" timestamp with time zone  /* Option < pgrx :: datum :: TimestampWithTimeZone > */
)
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'context_messages_wrapper';

-------------------------------------------------------------------------------- blocks
CREATE  FUNCTION "compile_blocks"(
	"agent_id" TEXT /* Option < & str > */
) RETURNS jsonb /* JsonB */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'compile_blocks_wrapper';

-------------------------------------------------------------------------------- session
ALTER TABLE memory.messages ADD COLUMN item jsonb;
CREATE  FUNCTION "session_add_items"(
	"session_id" TEXT, /* Option < & str > */
	"items" jsonb, /* Option < Json > */
	"user_id" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS bigint /* i64 */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_add_items_wrapper';

CREATE  FUNCTION "session_clear"(
	"session_id" TEXT /* Option < & str > */
) RETURNS bigint /* i64 */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_clear_wrapper';

CREATE  FUNCTION "session_get_items"(
	"session_id" TEXT, /* Option < & str > */
	"limit" INT DEFAULT NULL /* Option < i32 > */
) RETURNS jsonb /* JsonB */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_get_items_wrapper';

CREATE  FUNCTION "session_pop_item"(
	"session_id" TEXT /* Option < & str > */
) RETURNS jsonb /* Option < JsonB > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'session_pop_item_wrapper';
