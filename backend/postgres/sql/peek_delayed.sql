-- peek_delayed: the delayed job of tube $2 that is due soonest (one whose time has come is ready).
-- $1 now (NULL: database clock), $2 tube.
SELECT id, tube, priority, body FROM {{schema}}.jobs
WHERE tube = $2::text AND state = 2 AND due_at > {{now}}
ORDER BY due_at, id LIMIT 1
