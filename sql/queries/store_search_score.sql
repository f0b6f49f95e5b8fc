-- store_search.sql's score with a query vector ($6, of model $7): the cosine similarity of
-- the item's best-matching indexed text of that model and size, NULL when it has none.
(SELECT max(1 - (v.embedding {op} $6::{vector}))
   FROM memory.store_vectors v
  WHERE v.user_id = s.user_id AND v.namespace = s.namespace AND v.key = s.key
    AND v.embedding_model = $7 AND {vector_dims}(v.embedding) = {vector_dims}($6::{vector}))
