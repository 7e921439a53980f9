-- peek_ready: the job of tube $1 a reserve would take (paused or not).
SELECT id, tube, priority, body FROM {{schema}}.jobs
WHERE tube = $1::text AND state = 1
ORDER BY priority, id LIMIT 1
