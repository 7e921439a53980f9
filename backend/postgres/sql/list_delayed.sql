-- list_delayed: a page of tube $2's delayed jobs by (due time, id) after ($3, $4), each with its
-- stats-job figures (as job_stats.sql) and the start of its body. One index range of
-- jobs_delayed_tube: the lower bound is the cursor or now, whichever is later (a job due by now
-- is ready, see list_ready.sql), folded into one row comparison so that the scan starts there.
-- $1 now (NULL: database clock), $2 tube, $3 cursor due time (-infinity: from the start),
-- $4 cursor id, $5 how many, $6 body bytes.
SELECT id, tube, state, priority, created_at, delay_us, ttr_us, due_at,
       reserves, timeouts, releases, buries, kicks, {{now}},
       octet_length(body), substring(body FROM 1 FOR $6::int),
       (extract(epoch FROM due_at) * 1000000)::bigint
FROM {{schema}}.jobs
WHERE tube = $2::text AND state = 2
  AND (due_at, id) > (greatest($3::timestamptz, {{now}}),
                      CASE WHEN $3::timestamptz > {{now}} THEN $4::bigint ELSE 9223372036854775807 END)
ORDER BY due_at, id LIMIT $5::bigint
