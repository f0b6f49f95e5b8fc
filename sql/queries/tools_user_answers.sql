-- memory_consent as a tool: what the user said in the call's thread since the change was
-- proposed (the only words that can decide it), newest first: seq, content. Only the user's
-- own messages: an assistant's or a tool's text is the model's, whatever it says.
-- $1 user_id, $2 thread_id, $3 when the proposal was made.
SELECT seq, content
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND role = 'user' AND created_at >= $3
ORDER BY seq DESC
LIMIT 50
