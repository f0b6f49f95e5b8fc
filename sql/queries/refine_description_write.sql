-- A captured output's description refined by the worker (src/ops/detail.rs `refine`): the
-- model's line as its description (NULL: kept) with the new metadata. $1 user_id, $2 key,
-- $3 description or NULL, $4 metadata.
UPDATE memory.details SET description = coalesce($3, description), metadata = $4
WHERE user_id = $1 AND key = $2
