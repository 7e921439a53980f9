-- peek: job $1 in any state.
SELECT id, tube, priority, body FROM {{schema}}.jobs WHERE id = $1::bigint
