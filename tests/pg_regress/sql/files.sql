-- Memory files (docs/design.md "Memory files"): write, read, list, edit, grep, search, delete; paths unique
-- per user; bad paths 22023; nothing half-written.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'fay';

SELECT memory_file_write('projects/hdrpop/status.md', E'# HDRPop status\nAds paused due to low ROAS.\nBudget review on Friday.',
                         tags => ARRAY['hdrpop', 'ads']) - 'id' - 'updated_at' AS written;
SELECT memory_file_write('projects/hdrpop/status.md', E'# HDRPop status\nAds paused due to low ROAS.\nBudget review on Friday.') ->> 'event' AS again;
SELECT memory_file_write('episodes/2026-01-15/zerg-worker-ssh.md',
                         E'We debugged runner_exec auth failures.\nThe SSH key was missing on the worker.',
                         title => 'Zerg worker SSH', metadata => '{"run": 12}') ->> 'event' AS event;
SELECT memory_file_write('projectsx/other.md', 'Unrelated notes about gardening.') ->> 'event' AS event;
-- Overwrite: content replaced, tags kept when not given.
SELECT memory_file_write('projects/hdrpop/status.md', E'# HDRPop status\nAds resumed after the ROAS fix.\nBudget review on Friday.') ->> 'event' AS event;

SELECT path, title, tags, chars FROM memory_file_ls();
SELECT path FROM memory_file_ls('projects');
SELECT path FROM memory_file_ls('projects/', 1);
SELECT r - 'created_at' - 'updated_at' - 'last_accessed_at' AS file,
       (r->>'last_accessed_at') IS NOT NULL AS accessed
FROM memory_file_read('projects/hdrpop/status.md') r;

-- Edit: a string replace that must match exactly once.
SELECT memory_file_edit('episodes/2026-01-15/zerg-worker-ssh.md', 'was missing', 'had expired') - 'id' - 'updated_at' AS edited;
SELECT memory_file_read('episodes/2026-01-15/zerg-worker-ssh.md') ->> 'content' AS content;
SELECT memory_file_edit('episodes/2026-01-15/zerg-worker-ssh.md', 'e', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_edit('episodes/2026-01-15/zerg-worker-ssh.md', 'not there', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_edit('nowhere.md', 'a', 'b');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_edit('episodes/2026-01-15/zerg-worker-ssh.md', '', 'x');
\echo :LAST_ERROR_SQLSTATE

-- Grep: Postgres regular expressions over lines; (?i) for case-insensitive.
SELECT * FROM memory_file_grep('ROAS');
SELECT * FROM memory_file_grep('(?i)ssh|budget', 'episodes');
SELECT * FROM memory_file_grep('.', "limit" => 2);
SELECT * FROM memory_file_grep('([a');
\echo :LAST_ERROR_SQLSTATE

-- Search: keyword and meaning; tags filter.
SELECT path, snippet FROM memory_file_search('why did the worker fail to authenticate?', "limit" => 1);
SELECT path FROM memory_file_search('advertising budget', tags => ARRAY['hdrpop']);
SELECT path FROM memory_file_search('gardening', "limit" => 1);

-- Another tenant: own namespace, same paths allowed, nothing of fay's visible.
SET memory_ext.user_id = 'fay-other';
SELECT count(*) AS visible FROM memory_file_ls();
SELECT memory_file_write('projects/hdrpop/status.md', 'mine') ->> 'event' AS same_path_other_tenant;
SELECT memory_file_read('projects/hdrpop/status.md') ->> 'content' AS content;
SELECT memory_file_read('projects/hdrpop/status.md', 'fay');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.user_id = 'fay';

-- Bad paths and arguments: 22023 / 22004, nothing written.
SELECT count(*) AS files_before FROM memory.files;
SELECT memory_file_write('', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('../etc/passwd', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('/etc/passwd', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('a//b.md', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('dir/', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write(repeat('a', 513), 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write(NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('ok.md', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('ok.md', 'x', tags => ARRAY[NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('ok.md', 'x', metadata => '"text"');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_write('ok.md', 'x', title => repeat('t', 256));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_file_ls('../up');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_file_ls("limit" => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_file_grep('');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_file_grep(repeat('a', 1001));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM memory_file_search('');
\echo :LAST_ERROR_SQLSTATE
SELECT memory_file_read('missing.md');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS files_after FROM memory.files;

-- Delete: true once, then false.
SELECT memory_file_delete('projectsx/other.md') AS deleted, memory_file_delete('projectsx/other.md') AS again;
SELECT path FROM memory_file_ls();
RESET ROLE;
