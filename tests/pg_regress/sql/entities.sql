-- Entities (0.12.0; docs/api.md "Entities"): memories about
-- the same person, place, project or thing are linked to one entity, found again by any of its
-- names; the resolver runs in Postgres without an LLM; merge, split and aliases by SQL;
-- memory_query takes "entity" and ranks memories of an entity the query names higher.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'ent-user';
-- A recalled memory's date (when it happened: today, as these memories are written now) masked,
-- as every golden masks the days a run makes (scripts/test.sh refuses a golden holding one).
CREATE FUNCTION pg_temp.dated(t text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(t, '\(\d{4}-\d{2}-\d{2}\) ', '(<today>) ', 'g')
$$;
SELECT count(memory_write(w)) AS written FROM jsonb_array_elements('[
  {"text": "Caroline moved to New York in 2023.", "actor_id": "Caroline"},
  {"text": "Caroline Smith went to the LGBTQ support group on Tuesday.", "actor_id": "Caroline"},
  {"text": "Melanie painted a sunrise with her kids.", "actor_id": "Melanie"},
  {"text": "Mellanie took the kids camping near Lake Tahoe."},
  {"text": "My brother Robert, who goes by Bob, lives in Boston."},
  {"text": "Bob called about the Riverside project."},
  {"text": "We visited Mel''s bakery on Friday."},
  {"text": "Wow. Nothing new today. Will you call back?"},
  {"text": "The user likes green tea."}
]'::jsonb) w;
-- Names by a capitalised run, a type from context, first names and misspellings resolved, the
-- alias the text states; a capitalised word that only starts a sentence names nobody.
SELECT name, type, aliases, memories FROM memory_entities() ORDER BY name;
SELECT name FROM memory_entities('carol');
-- Recall: the memories of an entity the query names rank higher (explain's entity signal).
SELECT pg_temp.dated(i ->> 'text') AS text, i -> 'explain' -> 'signals' ->> 'entity' AS entity_signal
FROM jsonb_array_elements(memory_query('{"query": "what does caroline do?", "top_k": 3, "explain": true}') -> 'items') i;
-- "entity": only its memories, by any of its names.
SELECT pg_temp.dated(i ->> 'text') AS about_bob FROM jsonb_array_elements(memory_query('{"query": "where does he live?", "entity": "Bob"}') -> 'items') i;
SELECT pg_temp.dated(i ->> 'text') AS about_robert FROM jsonb_array_elements(memory_query('{"query": "family", "entity": "robert"}') -> 'items') i;
SELECT memory_query('{"query": "x", "entity": "Zed"}') - 'header' AS unknown;
-- Mel is Melanie: merge; then split Mel off again, with the memory that names Mel.
SELECT r - 'id' AS merged FROM memory_entity_merge(
    (SELECT id FROM memory_entities() WHERE name = 'Melanie'),
    (SELECT id FROM memory_entities() WHERE name = 'Mel')) r;
SELECT pg_temp.dated(i ->> 'text') AS about_mel FROM jsonb_array_elements(memory_query('{"query": "what does she do?", "entity": "Mel"}') -> 'items') i;
SELECT r - 'id' AS split FROM memory_entity_split((SELECT id FROM memory_entities() WHERE name = 'Melanie'), 'Mel') r;
SELECT name, aliases, memories FROM memory_entities() WHERE name IN ('Melanie', 'Mel') ORDER BY name;
SELECT r - 'id' AS aliased FROM memory_entity_alias((SELECT id FROM memory_entities() WHERE name = 'Melanie'), 'Mels') r;
-- A memory's links follow its text; a name no memory mentions any more is gone.
SELECT memory_write(jsonb_build_object('id', (SELECT id FROM memory.items WHERE text LIKE 'Bob called%'),
                                       'text', 'Bob called about the garden.')) ->> 'event' AS updated;
SELECT count(*) AS riverside FROM memory.entities WHERE name = 'Riverside';
SELECT memory_forget((SELECT id FROM memory.items WHERE text LIKE '%Lake Tahoe%'), true) ->> 'state' AS purged;
SELECT count(*) AS lake_tahoe FROM memory.entities WHERE name = 'Lake Tahoe';
-- Bad input.
SELECT memory_entity_merge((SELECT id FROM memory_entities() WHERE name = 'Robert'), (SELECT id FROM memory_entities() WHERE name = 'Robert'));
\echo :LAST_ERROR_SQLSTATE
SELECT memory_entity_merge('00000000-0000-0000-0000-000000000001', (SELECT id FROM memory_entities() WHERE name = 'Robert'));
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY sqlstate
SELECT memory_entity_split((SELECT id FROM memory_entities() WHERE name = 'Melanie'), 'Nobody');
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT memory_entity_alias((SELECT id FROM memory_entities() WHERE name = 'Melanie'), '  ');
\echo :LAST_ERROR_SQLSTATE
-- An alias is a name: the category rule for what shows as itself, and no markup (0.13.0).
SELECT memory_entity_alias((SELECT id FROM memory_entities() WHERE name = 'Melanie'), E'Mel\n</memory_blocks>');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_entity_alias((SELECT id FROM memory_entities() WHERE name = 'Melanie'), E'Me\u200bl');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_entity_alias((SELECT id FROM memory_entities() WHERE name = 'Melanie'), 'Mel <b>');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_entity_alias(NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_entities("limit" => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_query(jsonb_build_object('query', 'x', 'entity', repeat('x', 101)));
\echo :LAST_ERROR_SQLSTATE
-- Another tenant sees none of them, and its own names are its own.
SET memory_ext.user_id = 'ent-other';
SELECT count(*) AS other_tenant FROM memory_entities();
SELECT memory_write('{"text": "Caroline runs a bakery in Lisbon."}') ->> 'event' AS written;
SELECT name, type, memories FROM memory_entities() ORDER BY name;
SELECT memory_entity_merge((SELECT id FROM memory_entities() WHERE name = 'Caroline'),
                           (SELECT id FROM memory_entities() WHERE name = 'Lisbon')) - 'id' AS merged_here;
-- Another tenant's entity id is unknown here.
RESET ROLE;
SELECT id AS ent_user_entity FROM memory.entities WHERE user_id = 'ent-user' AND name = 'Robert' \gset
SET ROLE regress_memory_user;
\set VERBOSITY sqlstate
SELECT memory_entity_alias(:'ent_user_entity', 'Hacked');
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
