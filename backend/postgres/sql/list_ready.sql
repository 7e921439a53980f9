-- list_ready: a page of tube $2's ready jobs by (priority, id) after ($3, $4), each with its
-- stats-job figures (as job_stats.sql) and the start of its body. Ready rows come from an index
-- range of jobs_ready; as time is applied as it is read, delayed jobs whose time has come and
-- reservations past their deadline are ready too, taken among the first 500 of each by due time
-- as a reserve promotes them (promote_tubes.sql, peek_ready.sql).
-- $1 now (NULL: database clock), $2 tube, $3 cursor priority (-1: from the start), $4 cursor id,
-- $5 how many, $6 body bytes.
WITH page AS (
    (SELECT * FROM {{schema}}.jobs
     WHERE tube = $2::text AND state = 1 AND (priority, id) > ($3::bigint, $4::bigint)
     ORDER BY priority, id LIMIT $5::bigint)
    UNION ALL
    (SELECT * FROM (
        SELECT * FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 2 AND due_at <= {{now}}
        ORDER BY due_at LIMIT 501) d
     WHERE (priority, id) > ($3::bigint, $4::bigint))
    UNION ALL
    (SELECT * FROM (
        SELECT * FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 3 AND due_at <= {{now}}
        ORDER BY due_at LIMIT 501) e
     WHERE (priority, id) > ($3::bigint, $4::bigint))
)
SELECT id, tube, 1::smallint, priority, created_at, delay_us, ttr_us, NULL::timestamptz,
       reserves, timeouts + (state = 3)::int, releases, buries, kicks, {{now}},
       octet_length(body), substring(body FROM 1 FOR $6::int), priority
FROM page
ORDER BY priority, id LIMIT $5::bigint
