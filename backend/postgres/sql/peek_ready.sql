-- peek_ready: the job of tube $2 a reserve would take (paused or not): the best (priority, id) of
-- the ready jobs and of the due ones not promoted yet, among the first 500 of each kind by due
-- time, as a reserve promotes them (promote_tubes.sql).
-- $1 now (NULL: database clock), $2 tube.
SELECT id, tube, priority, body FROM (
    (SELECT id, tube, priority, body FROM {{schema}}.jobs
     WHERE tube = $2::text AND state = 1
     ORDER BY priority, id LIMIT 1)
    UNION ALL
    (SELECT id, tube, priority, body FROM (
        SELECT * FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 2 AND due_at <= {{now}}
        ORDER BY due_at LIMIT 501) d
     ORDER BY priority, id LIMIT 1)
    UNION ALL
    (SELECT id, tube, priority, body FROM (
        SELECT * FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 3 AND due_at <= {{now}}
        ORDER BY due_at LIMIT 501) e
     ORDER BY priority, id LIMIT 1)
) c
ORDER BY priority, id LIMIT 1
