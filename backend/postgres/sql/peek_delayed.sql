-- peek_delayed: the delayed job of tube $1 that is due soonest.
SELECT id, tube, priority, body FROM {{schema}}.jobs
WHERE tube = $1::text AND state = 2
ORDER BY due_at, id LIMIT 1
