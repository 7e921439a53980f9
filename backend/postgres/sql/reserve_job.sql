-- reserve_job: reserves job $3 for session $2 if it is not reserved (run after promote, so an
-- expired reservation already counts as ready).
-- $1 now (NULL: database clock), $2 session, $3 id.
UPDATE {{schema}}.jobs
SET state = 3, reserved_by = $2::text, due_at = {{now}} + ttr_us * interval '1 microsecond', reserved_at = {{now}},
    buried_seq = NULL, reserves = reserves + 1
WHERE id = $3::bigint AND state <> 3
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
RETURNING id, tube, priority, body
