-- job_history: job $2's history (see 013), and a reservation past its deadline as timed out (as
-- job_stats reads it) until a statement returns it; no row when there is no job.
-- $1 now (NULL: database clock), $2 id.
SELECT coalesce(history, '{}') || CASE WHEN history IS NOT NULL AND state = 3 AND due_at <= {{now}}
    THEN ARRAY[{{schema}}.job_event('timed-out', reserved_by, 0, '')] ELSE '{}'::text[] END
FROM {{schema}}.jobs WHERE id = $2::bigint
