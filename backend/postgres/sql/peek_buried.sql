-- peek_buried: the oldest buried job of tube $1 (the one kick moves first).
SELECT id, tube, priority, body FROM {{schema}}.jobs
WHERE tube = $1::text AND state = 4
ORDER BY buried_seq LIMIT 1
