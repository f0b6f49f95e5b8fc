-- memory_ext 0.2.0 -> 0.3.0 (ALTER EXTENSION memory_ext UPDATE TO '0.3.0')
--
-- What changes: memory_search returns when each memory happened (`happened_at`, a new last
-- column); memories written without a thread are chained to the tenant's previous thread-less
-- memory of the same sitting, found through a new index. No stored row is rewritten; edges for
-- memories written before the upgrade are not added afterwards.
-- The fresh-install script of 0.3.0 and this upgrade give the same schema: tests/upgrade checks
-- it, catalog by catalog.

\echo Use "ALTER EXTENSION memory_ext UPDATE TO '0.3.0'" to load this file. \quit

-------------------------------------------------------------------------------- write
-- A thread-less memory's predecessor (sql/queries/write_previous_unthreaded.sql).
CREATE INDEX items_unthreaded_idx ON memory.items (user_id, created_at) WHERE thread_id IS NULL;

-------------------------------------------------------------------------------- search
-- A new result column: the function is replaced (its signature, the arguments, is unchanged).
DROP FUNCTION memory_search(text, text, integer, jsonb);
CREATE  FUNCTION "memory_search"(
	"query" TEXT, /* Option < & str > */
	"user_id" TEXT DEFAULT NULL, /* Option < & str > */
	"top_k" INT DEFAULT 5, /* Option < i32 > */
	"filters" jsonb DEFAULT '{}' /* Option < Json > */
) RETURNS TABLE (
	"id" uuid,  /* pgrx :: Uuid */
	"kind" TEXT,  /* String */
	"category" TEXT,  /* Option < String > */
	"text" TEXT,  /* String */
	"score" double precision,  /* f64 */
	"importance" smallint,  /* i16 */
	"updated_at" timestamp with time zone,  /* TimestampWithTimeZone */
	"happened_at" timestamp with time zone  /* TimestampWithTimeZone */
)
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_search_wrapper';
