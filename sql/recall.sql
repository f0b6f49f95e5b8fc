-- Recall memory in SQL (docs/api.md "Recall memory and compaction").

-- conversation_search_date(start_date, end_date, thread_id, agent_id, limit, offset, user_id):
-- the messages sent between two days (both included, UTC), oldest first, in one thread, in the
-- threads an agent reads (its own and the user's unassigned ones), or in all of the tenant's
-- threads. MemGPT's time-based retrieval: "what did we discuss last Tuesday?"
-- needs neither a thread nor a query. The result names each message's thread (`thread`: a
-- column cannot share the `thread_id` argument's name). Paged by limit and offset: a listing,
-- not a ranking. PL/pgSQL: Citus plans no SQL function with parameters (docs/citus.md).
CREATE FUNCTION conversation_search_date(start_date date, end_date date,
                                         thread_id text DEFAULT NULL, agent_id text DEFAULT NULL,
                                         "limit" integer DEFAULT 100, "offset" integer DEFAULT 0,
                                         user_id text DEFAULT NULL)
RETURNS TABLE (id uuid, thread text, seq bigint, role text, content text, created_at timestamptz)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    tenant text := memory.resolve_tenant(conversation_search_date.user_id);
    t text := conversation_search_date.thread_id;
    a text := conversation_search_date.agent_id;
    lim integer := conversation_search_date."limit";
    skip integer := conversation_search_date."offset";
BEGIN
    IF start_date IS NULL OR end_date IS NULL THEN
        RAISE EXCEPTION 'start_date and end_date are required' USING ERRCODE = '22004';
    END IF;
    IF end_date < start_date THEN
        RAISE EXCEPTION 'end_date % is before start_date %', to_char(end_date, 'YYYY-MM-DD'), to_char(start_date, 'YYYY-MM-DD') USING ERRCODE = '22023';
    END IF;
    IF lim IS NULL OR lim < 1 OR lim > 1000 THEN
        RAISE EXCEPTION 'limit must be between 1 and 1000, not %', lim USING ERRCODE = '22023';
    END IF;
    IF skip IS NULL OR skip < 0 THEN
        RAISE EXCEPTION 'offset must be 0 or more, not %', skip USING ERRCODE = '22023';
    END IF;
    IF t IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory.threads th WHERE th.user_id = tenant AND th.thread_id = t) THEN
        RAISE EXCEPTION 'thread "%" not found', t USING ERRCODE = 'P0002';
    END IF;
    IF a IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory.agents ag WHERE ag.user_id = tenant AND ag.agent_id = a) THEN
        RAISE EXCEPTION 'agent "%" not found', a USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY
    SELECT m.id, m.thread_id, m.seq, m.role, m.content, m.created_at
    FROM memory.messages m
    WHERE m.user_id = tenant
      AND m.created_at >= (start_date::timestamp AT TIME ZONE 'UTC')
      AND m.created_at < ((end_date + 1)::timestamp AT TIME ZONE 'UTC')
      AND (t IS NULL OR m.thread_id = t)
      AND (t IS NOT NULL OR a IS NULL OR m.thread_id IN (
              SELECT th.thread_id FROM memory.threads th
              WHERE th.user_id = tenant AND (th.agent_id = a OR th.agent_id IS NULL)))
    ORDER BY m.created_at, m.thread_id, m.seq
    LIMIT lim OFFSET skip;
END $$;
