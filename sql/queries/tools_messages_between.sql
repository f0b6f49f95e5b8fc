-- conversation_search_date through memory_tool_call: how many messages the agent's
-- conversations hold between two days (both included, in UTC), and one page of them, oldest
-- first: the minute each was sent (UTC), its thread, its role, its text and its turn (seq), as
-- arrays in that order (src/ops/tools/conversation.rs writes the lines). The conversations are the call's thread and
-- every thread the agent reads (its own and the user's unassigned ones), as MemGPT's date
-- search covers all of an agent's messages: last Tuesday's talk was another
-- thread. Listing needs no ranking, so it pages here over every message of the days.
-- One row always (a page past the end has a count and no messages).
-- $1 user_id, $2 the call's thread_id or NULL, $3 first day (YYYY-MM-DD), $4 last day, $5 rows
-- skipped, $6 page size, $7 agent_id.
SELECT count(*),
       array_agg(d.at ORDER BY d.n) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6),
       array_agg(d.thread_id ORDER BY d.n) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6),
       array_agg(d.role ORDER BY d.n) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6),
       array_agg(d.content ORDER BY d.n) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6),
       array_agg(d.seq ORDER BY d.n) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6)
FROM (SELECT m.thread_id, m.role, m.content, m.seq,
             to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS at,
             row_number() OVER (ORDER BY m.created_at, m.thread_id, m.seq) AS n
      FROM memory.messages m
      WHERE m.user_id = $1
        AND (m.thread_id = $2 OR m.thread_id IN (
                SELECT t.thread_id FROM memory.threads t
                WHERE t.user_id = $1 AND (t.agent_id = $7 OR t.agent_id IS NULL)))
        AND m.created_at >= ($3::date)::timestamp AT TIME ZONE 'UTC'
        AND m.created_at < ($4::date + 1)::timestamp AT TIME ZONE 'UTC') d
