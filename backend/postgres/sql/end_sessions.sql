-- end_sessions: forgets sessions $2 ($1 now, NULL: the database clock): their reserved jobs
-- return to ready at once (counters unchanged), their tube references are dropped (gc_tubes runs
-- after it). Announces the tubes that got ready jobs and returns the jobs, in the order they were reserved, with their tubes and
-- whether the tube is paused now, for the local waiters (a job goes to a waiting reserve in that
-- order, as beanstalkd hands them out). Not worth a WAL flush: after a crash the sessions are
-- gone and their reservations ready anyway.
WITH ended AS (
    DELETE FROM {{schema}}.sessions WHERE id = ANY($2::text[]) RETURNING used_tube
), unwatched AS (
    DELETE FROM {{schema}}.session_watches WHERE session_id = ANY($2::text[]) RETURNING tube
), expired AS (
    -- Reservations already past their deadline time out first (counted), as at their deadline.
    SELECT count(*) AS n FROM {{schema}}.jobs
    WHERE state = 3 AND reserved_by = ANY($2::text[]) AND due_at <= {{now}}
), counted AS (
    INSERT INTO {{schema}}.job_timeout_counts (n) SELECT n FROM expired WHERE n > 0
), returned AS (
    UPDATE {{schema}}.jobs
    -- A reservation past its deadline became ready at it.
    SET state = 1, reserved_by = NULL, timeouts = timeouts + (due_at <= {{now}})::int,
        ready_at = least(due_at, {{now}}), due_at = NULL
    WHERE state = 3 AND reserved_by = ANY($2::text[])
    RETURNING id, tube, reserved_at
), refs AS (
    SELECT tube, sum(u) AS u, sum(w) AS w FROM (
        SELECT used_tube AS tube, 1 AS u, 0 AS w FROM ended
        UNION ALL
        SELECT tube, 0, 1 FROM unwatched
    ) r GROUP BY tube
), dropped AS (
    UPDATE {{schema}}.tubes t
    SET using_count = t.using_count - refs.u, watching_count = t.watching_count - refs.w
    FROM refs WHERE t.name = refs.tube
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube) FROM returned GROUP BY tube
)
SELECT array(SELECT id FROM returned r ORDER BY r.reserved_at, r.id),
       array(SELECT tube FROM returned r ORDER BY r.reserved_at, r.id),
       array(SELECT coalesce(t.pause_until > {{now}}, false) FROM returned r
             LEFT JOIN {{schema}}.tubes t ON t.name = r.tube ORDER BY r.reserved_at, r.id)
WHERE (SELECT count(*) FROM notified) >= 0
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
