-- conversation_search_date through memory_tool_call: how many messages of a thread were sent
-- between two days (both included, in UTC), and one page of them, oldest first: the minute each
-- was sent (UTC), its role and its text, as arrays in that order (src/store/tools.rs writes the
-- lines). Listing needs no ranking, so it pages here over every message of the days.
-- One row always (a page past the end has a count and no messages).
-- $1 user_id, $2 thread_id, $3 first day (YYYY-MM-DD), $4 last day, $5 rows skipped, $6 page size.
SELECT count(*),
       array_agg(d.at ORDER BY d.seq) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6),
       array_agg(d.role ORDER BY d.seq) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6),
       array_agg(d.content ORDER BY d.seq) FILTER (WHERE d.n > $5 AND d.n <= $5 + $6)
FROM (SELECT m.seq, m.role, m.content,
             to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS at,
             row_number() OVER (ORDER BY m.seq) AS n
      FROM memory.messages m
      WHERE m.user_id = $1 AND m.thread_id = $2
        AND m.created_at >= ($3::date)::timestamp AT TIME ZONE 'UTC'
        AND m.created_at < ($4::date + 1)::timestamp AT TIME ZONE 'UTC') d
