-- touch: restarts the TTR of job $3, reserved by session $2 and not yet past its TTR. Like a
-- reservation it is not worth a WAL flush (beanstalkd does not log it).
-- $1 now (NULL: database clock), $2 session, $3 id.
UPDATE {{schema}}.jobs
SET due_at = {{now}} + ttr_us * interval '1 microsecond'
WHERE id = $3::bigint AND state = 3 AND reserved_by = $2::text AND due_at > {{now}}
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
RETURNING id
