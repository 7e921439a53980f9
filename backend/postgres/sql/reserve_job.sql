-- reserve_job: reserves job $3 for session $2 if it is not reserved: ready, delayed (due or not) or
-- buried, or a reservation past its deadline, which times out first (counted).
-- $1 now (NULL: database clock), $2 session, $3 id.
-- Returns (id, tube, priority, body, deadline) of the job reserved, or nothing.
WITH before AS (
    SELECT state = 3 AS expired FROM {{schema}}.jobs WHERE id = $3::bigint
), taken AS (
    UPDATE {{schema}}.jobs
    SET state = 3, reserved_by = $2::text, due_at = {{now}} + ttr_us * interval '1 microsecond',
        reserved_at = {{now}}, buried_seq = NULL, reserves = reserves + 1,
        timeouts = timeouts + (state = 3)::int
    WHERE id = $3::bigint AND (state <> 3 OR due_at <= {{now}})
      AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
    RETURNING id, tube, priority, body, due_at
), counted AS (
    INSERT INTO {{schema}}.job_timeout_counts (n)
    SELECT 1 FROM taken WHERE (SELECT expired FROM before)
)
SELECT id, tube, priority, body, due_at FROM taken
