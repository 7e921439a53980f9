-- job_stats: job $2 and the time its ages and time-left are measured against. Time is applied as
-- it is read (see stats.sql): a delayed job whose time has come is ready, a reservation past its
-- deadline is ready and has timed out once more.
-- $1 now (NULL: database clock), $2 id.
SELECT id, tube,
       CASE WHEN state IN (2, 3) AND due_at <= {{now}} THEN 1 ELSE state END,
       priority, created_at, delay_us, ttr_us,
       CASE WHEN state IN (2, 3) AND due_at <= {{now}} THEN NULL ELSE due_at END,
       reserves, timeouts + (state = 3 AND due_at <= {{now}})::int, releases, buries, kicks, {{now}}
FROM {{schema}}.jobs WHERE id = $2::bigint
