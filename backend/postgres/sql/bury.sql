-- bury: moves job $3, reserved by session $2 and not yet past its TTR, to the end of its tube's
-- buried list with priority $4.
-- $1 now (NULL: database clock), $2 session, $3 id, $4 priority.
-- The conditions beside the id are wrapped in (...) IS TRUE, which no index can serve, so that the
-- job is found by its primary key: a generic plan made on a small table would otherwise scan a
-- partial index of all reservations (jobs_reserved_by, jobs_reserved_tube).
UPDATE {{schema}}.jobs
SET priority = $4::bigint, buries = buries + 1, reserved_by = NULL, state = 4, due_at = NULL,
    buried_seq = nextval('{{schema}}.buried_seq')
WHERE id = $3::bigint AND (state = 3 AND reserved_by = $2::text AND due_at > {{now}}) IS TRUE
RETURNING tube
