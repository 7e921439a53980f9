-- job_stats: job $2 and the time its ages and time-left are measured against.
-- $1 now (NULL: database clock), $2 id.
SELECT id, tube, state, priority, created_at, delay_us, ttr_us, due_at,
       reserves, timeouts, releases, buries, kicks, {{now}}
FROM {{schema}}.jobs WHERE id = $2::bigint
