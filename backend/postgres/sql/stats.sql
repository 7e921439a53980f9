-- stats: the store-wide figures. Time is applied as it is read: a delayed job whose time has come
-- and a reservation past its deadline count as ready (the rows change when a reserve, or a
-- command on the job, next touches them; readers never write, so they hold no lock a reserve
-- would have to skip or wait for). Each state is counted through its own partial index (the
-- connections run with enable_seqscan off), so the cost is O(jobs in that state). Timeouts are
-- the counters row plus the counts appended since the heartbeat last folded them in, plus the
-- reservations past their deadline.
-- Reservations past their deadline are counted tube by tube, each an index range of
-- jobs_reserved_tube (tube, due_at): O(tubes + expired reservations), not a scan of every
-- reservation (there is no index on the deadlines of all tubes' reservations, see
-- 008_drop_reserved_due). Every job's tube has its row in tubes (jobs_count keeps it).
-- $1 now (NULL: the database clock).
WITH expired AS (
    -- Aggregated inside the lateral subquery, so that it cannot become a join: a lookup per tube.
    SELECT coalesce(sum(e.n), 0) AS n, coalesce(sum(e.urgent), 0) AS urgent
    FROM {{schema}}.tubes t
    CROSS JOIN LATERAL (SELECT count(*) AS n, count(*) FILTER (WHERE j.priority < 1024) AS urgent
                        FROM {{schema}}.jobs j
                        WHERE j.tube = t.name AND j.state = 3 AND j.due_at <= {{now}}) e
)
SELECT (SELECT count(*) FROM {{schema}}.jobs WHERE state = 1 AND priority < 1024)
           + (SELECT count(*) FROM {{schema}}.jobs WHERE state = 2 AND due_at <= {{now}} AND priority < 1024)
           + (SELECT urgent FROM expired),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 1)
           + (SELECT count(*) FROM {{schema}}.jobs WHERE state = 2 AND due_at <= {{now}})
           + (SELECT n FROM expired),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 3 AND due_at > {{now}}),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 2 AND due_at > {{now}}),
       (SELECT count(*) FROM {{schema}}.jobs WHERE state = 4),
       (SELECT total_jobs FROM {{schema}}.counters WHERE id = 1),
       (SELECT job_timeouts FROM {{schema}}.counters WHERE id = 1)
           + (SELECT coalesce(sum(n), 0) FROM {{schema}}.job_timeout_counts)::bigint
           + (SELECT n FROM expired),
       (SELECT count(*) FROM {{schema}}.tubes
        WHERE name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0)
