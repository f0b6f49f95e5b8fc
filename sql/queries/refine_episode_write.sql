-- A pending episode's metadata after a failed attempt (src/ops/episodes.rs `refine`): the count
-- raised, or the mark dropped. $1 user_id, $2 path, $3 metadata.
UPDATE memory.files SET metadata = $3 WHERE user_id = $1 AND path = $2
