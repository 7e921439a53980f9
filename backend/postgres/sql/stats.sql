-- stats: the store-wide figures (a scan of the jobs table: the stats command is not a hot path).
SELECT count(*) FILTER (WHERE state = 1 AND priority < 1024),
       count(*) FILTER (WHERE state = 1),
       count(*) FILTER (WHERE state = 3),
       count(*) FILTER (WHERE state = 2),
       count(*) FILTER (WHERE state = 4),
       (SELECT total_jobs FROM {{schema}}.counters WHERE id = 1),
       (SELECT job_timeouts FROM {{schema}}.counters WHERE id = 1),
       (SELECT count(*) FROM {{schema}}.tubes
        WHERE name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0)
FROM {{schema}}.jobs
