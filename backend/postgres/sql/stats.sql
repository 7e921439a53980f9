-- stats: the store-wide figures. Each state is counted through its own partial index (the
-- connections run with enable_seqscan off), so the cost is O(jobs in that state). Timeouts are
-- the counters row plus the counts appended since the maintenance loop last folded them in.
SELECT (SELECT count(*) FROM {{schema}}.jobs WHERE state = 1 AND priority < 1024),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 1),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 3),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 2),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 4),
       (SELECT total_jobs FROM {{schema}}.counters WHERE id = 1),
       (SELECT job_timeouts FROM {{schema}}.counters WHERE id = 1)
           + (SELECT coalesce(sum(n), 0) FROM {{schema}}.job_timeout_counts)::bigint,
       (SELECT count(*) FROM {{schema}}.tubes
        WHERE name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0)
