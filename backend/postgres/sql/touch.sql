-- touch: restarts the TTR of job $3, reserved by session $2 and not yet past its TTR. Like a
-- reservation it is not worth a WAL flush (beanstalkd does not log it). The touch is marked
-- (beangate.touch) for jobs_history (see 013): with a clock that has not moved, it changes no column.
-- $1 now (NULL: database clock), $2 session, $3 id.
-- The conditions beside the id are wrapped in (...) IS TRUE, which no index can serve, so that the
-- job is found by its primary key: a generic plan made on a small table would otherwise scan a
-- partial index of all reservations (jobs_reserved_by, jobs_reserved_tube).
UPDATE {{schema}}.jobs
SET due_at = {{now}} + ttr_us * interval '1 microsecond'
WHERE id = $3::bigint AND (state = 3 AND reserved_by = $2::text AND due_at > {{now}}) IS TRUE
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
  AND (SELECT set_config('beangate.touch', $3::bigint::text, true)) IS NOT NULL
RETURNING tube
