-- tube_stats: tube $2 if it exists (default, or referenced by a job or a session).
-- Job counts are counted through the partial indexes: O(jobs in the tube), fine for a command
-- that operators run. Time is applied as it is read (see stats.sql).
-- $1 now (NULL: database clock), $2 tube.
SELECT t.name,
       (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 1 AND priority < 1024)
           + (SELECT count(*) FROM {{schema}}.jobs
              WHERE tube = t.name AND state IN (2, 3) AND due_at <= {{now}} AND priority < 1024),
       (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 1)
           + (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 2 AND due_at <= {{now}})
           + (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 3 AND due_at <= {{now}}),
       (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 3 AND due_at > {{now}}),
       (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 2 AND due_at > {{now}}),
       (SELECT count(*) FROM {{schema}}.jobs WHERE tube = t.name AND state = 4),
       t.total_jobs, t.using_count, t.watching_count, t.cmd_delete, t.cmd_pause,
       t.pause_us, t.pause_until, {{now}}
FROM {{schema}}.tubes t
WHERE t.name = $2::text
  AND (t.name = 'default' OR t.jobs_count > 0 OR t.using_count > 0 OR t.watching_count > 0)
