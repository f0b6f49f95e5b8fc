-- A retrieval's access, queued for the worker (src/ops/access.rs says when): the ids of the
-- memories it returned. $1 user_id, $2 ids. sql/queries/access_fold.sql counts them.
INSERT INTO memory.access_queue (user_id, ids) VALUES ($1, $2::uuid[])
