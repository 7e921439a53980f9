-- reserve_handed: reserves job $3 for session $2 if it is still ready, in one of the session's
-- tubes $4, and its tube is not paused: a job a closing session returned, handed to the
-- longest-waiting reserve of its tube (see end_sessions.sql). No row: someone else was faster,
-- and the waiting reserve goes on as any other.
-- $1 now (NULL: database clock), $2 session, $3 id, $4 the session's watched tubes.
UPDATE {{schema}}.jobs j
SET state = 3, reserved_by = $2::text, due_at = {{now}} + j.ttr_us * interval '1 microsecond',
    reserved_at = {{now}}, buried_seq = NULL, reserves = j.reserves + 1
WHERE j.id = $3::bigint AND j.state = 1 AND j.tube = ANY($4::text[])/*P*/
  -- Past its expire-after, it is the policy tick's to delete or bury, never to hand out.
  AND (j.expires_at IS NULL OR j.expires_at > {{now}})/*-P*/
  AND (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = j.tube) IS NOT TRUE
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
RETURNING j.id, j.tube, j.priority, j.body,
    -- How long it was ready (µs; NULL: not known). Never negative: another transaction may have
    -- made it ready after this one's now().
    greatest(0, (extract(epoch FROM {{now}} - j.ready_at) * 1000000)::bigint)
