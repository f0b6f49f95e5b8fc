-- Statistics (docs/api.md "Statistics", 0.12.0): memory_overview is one tenant's memory at a
-- glance, under row-level security; memory.stats is every tenant's, for the owner's monitoring
-- only. History names whom a role acted for (memory_ext.on_behalf_of) after the role itself.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'st-ana';
SELECT message_append('st-t', 'user', 'I water the tomatoes every morning.') ->> 'seq' AS seq;
SELECT memory_write('{"text": "Ana grows tomatoes.", "category": "hobbies", "thread_id": "st-t"}') ->> 'event' AS e1;
SELECT memory_write('{"text": "Ana waters them every morning.", "category": "hobbies", "kind": "procedural"}') ->> 'event' AS e2;
SELECT (memory_write('{"text": "Ana lives in Porto.", "category": "city"}') ->> 'id') AS porto \gset
SELECT memory_write('{"text": "Ana has a dentist appointment.", "category": "plans"}') ->> 'id' AS dentist \gset
SELECT memory_forget(:'dentist') ->> 'state' AS forgotten;
SELECT memory_write('{"text": "Ana lives in Lisbon.", "category": "city", "source": "inferred"}') ->> 'event' AS proposed;
-- One scan, grouped every way.
SELECT o -> 'memories' -> 'total' AS total, o -> 'memories' -> 'by_state' AS by_state,
       o -> 'memories' -> 'by_kind' AS by_kind, o -> 'memories' -> 'active_by_kind' AS active_by_kind,
       o -> 'memories' -> 'by_category' AS by_category
FROM memory_overview() o;
-- Every day of the period, today's with the four memories.
SELECT jsonb_array_length(o -> 'memories' -> 'per_day') AS days,
       o -> 'memories' -> 'per_day' -> -1 -> 'n' AS today,
       (SELECT sum((d ->> 'n')::int) FROM jsonb_array_elements(o -> 'memories' -> 'per_day') d) AS in_period,
       jsonb_array_length(memory_overview(days => 7) -> 'memories' -> 'per_day') AS week
FROM memory_overview() o;
SELECT t ->> 'thread_id' AS thread, t -> 'messages' AS messages, t -> 'context_messages' AS in_context,
       (t ->> 'context_tokens')::int > 0 AS counted
FROM memory_overview() o, jsonb_array_elements(o -> 'threads') t;
SELECT o -> 'proposals_pending' AS pending, o -> 'runs_waiting' AS runs, o -> 'embedding' -> 'failures' AS failures,
       o -> 'extraction' -> 'threads_failing' AS failing,
       (SELECT array_agg(w ->> 'job' ORDER BY w ->> 'job') FROM jsonb_array_elements(o -> 'worker') w) AS jobs,
       (SELECT bool_and(NOT (w ? 'last_error')) FROM jsonb_array_elements(o -> 'worker') w) AS no_error_texts,
       jsonb_array_length(o -> 'events') > 0 AS has_events
FROM memory_overview() o;
-- Another tenant, a bad period: refused.
SELECT memory_overview('st-bob');
SELECT memory_overview(days => 0);
SELECT memory_overview(days => 367);
-- A tenant with nothing: zeros, not errors.
SET memory_ext.user_id = 'st-nobody';
SELECT o -> 'memories' -> 'total' AS total, o -> 'memories' -> 'by_state' AS by_state, o -> 'threads' AS threads,
       o -> 'proposals_pending' AS pending, jsonb_array_length(o -> 'memories' -> 'per_day') AS days
FROM memory_overview() o;
SET memory_ext.user_id = 'st-ana';
-- Whom the role acted for, after the role; control characters become spaces, at most 100.
SET memory_ext.on_behalf_of = 'inspector: ops';
SELECT memory_write(jsonb_build_object('id', :'porto', 'text', 'Ana lives in Porto, near the river.')) ->> 'event' AS edited;
SELECT event, actor FROM memory_history(:'porto') ORDER BY ts DESC LIMIT 1;
-- The call's event names it too.
SELECT op, actor FROM memory.events WHERE memory_id = :'porto' ORDER BY ts DESC LIMIT 1;
SELECT set_config('memory_ext.on_behalf_of', E'ops\nforged line\t' || repeat('x', 200), false) IS NOT NULL AS set;
SELECT memory_write(jsonb_build_object('id', :'porto', 'text', 'Ana lives in Porto.')) ->> 'event' AS edited;
SELECT event, actor FROM memory_history(:'porto') ORDER BY ts DESC LIMIT 1;
SET memory_ext.on_behalf_of = '   ';
SELECT memory_write(jsonb_build_object('id', :'porto', 'text', 'Ana lives in Porto, by the sea.')) ->> 'event' AS edited;
SELECT event, actor FROM memory_history(:'porto') ORDER BY ts DESC LIMIT 1;
RESET memory_ext.on_behalf_of;
-- memory.stats: not for tenants.
SELECT count(*) FROM memory.stats();
RESET ROLE;
SELECT tenant, metric, label, value FROM memory.stats() WHERE tenant = 'st-ana' ORDER BY metric, label;
SELECT metric, count(*) > 0 AS rows FROM memory.stats() WHERE tenant = '' GROUP BY metric ORDER BY metric;
