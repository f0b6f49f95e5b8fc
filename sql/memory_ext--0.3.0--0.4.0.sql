-- memory_ext 0.3.0 -> 0.4.0 (ALTER EXTENSION memory_ext UPDATE TO '0.4.0')
--
-- What changes: agent tools served from SQL (docs/api.md "Agent tools"): memory_tools,
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
