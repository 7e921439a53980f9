-- 004_reserved_by_index: jobs_reserved_by keys on the session alone.
-- With (reserved_by, due_at), a generic plan made while the table was small served reserve's
-- "expired reservation of this tube" branch from this index with due_at as its only condition: a
-- scan of every live reservation of every session, on every reserve. Keyed on reserved_by alone it
-- cannot serve that branch, which then uses jobs_reserved_tube (tube, due_at) as intended. Its own
-- users (end_sessions: reserved_by = ANY; reserve_wait: a session's earliest deadline) look up one
-- session's few reservations. Only reserved jobs are in this partial index, so rebuilding it is
-- quick even on a large queue.
DROP INDEX {{schema}}.jobs_reserved_by;
CREATE INDEX jobs_reserved_by ON {{schema}}.jobs (reserved_by) WHERE state = 3;
