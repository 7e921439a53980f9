-- list_buried: a page of tube $2's buried jobs, oldest first (by buried_seq) after $3, each with
-- its stats-job figures (as job_stats.sql) and the start of its body: an index range of
-- jobs_buried.
-- $1 now (NULL: database clock), $2 tube, $3 cursor bury sequence (0: from the start), $4 unused,
-- $5 how many, $6 body bytes.
SELECT id, tube, state, priority, created_at, delay_us, ttr_us, NULL::timestamptz,
       reserves, timeouts, releases, buries, kicks, {{now}},
       octet_length(body), substring(body FROM 1 FOR $6::int), buried_seq
FROM {{schema}}.jobs
WHERE tube = $2::text AND state = 4 AND buried_seq > $3::bigint AND $4::bigint IS NOT NULL
ORDER BY buried_seq LIMIT $5::bigint
