-- ignore_tube: removes tube $2 from session $1's watch list (collected by gc_tubes after it).
WITH removed AS (
    DELETE FROM {{schema}}.session_watches WHERE session_id = $1::text AND tube = $2::text
    RETURNING tube
)
UPDATE {{schema}}.tubes t SET watching_count = t.watching_count - 1
FROM removed
WHERE t.name = removed.tube
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
