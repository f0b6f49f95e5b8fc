-- archive_old_messages(before_message): the newest message of the thread holding the quoted
-- words (any case), the one the model has in view. $1 user_id, $2 thread_id, $3 the words.
SELECT seq FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND strpos(lower(content), lower($3)) > 0
ORDER BY seq DESC LIMIT 1
