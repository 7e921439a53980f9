-- put: inserts a batch of jobs (group commit: the puts of many sessions arriving together share
-- one statement and one WAL flush). Tube rows are created if needed and locked in name order, so
-- concurrent batches cannot deadlock on them. Tubes receiving ready jobs are announced, and so
-- are tubes receiving a delayed job due before every delayed job already there: a waiting reserve
-- times its next try by the earliest due time it saw, so it must learn of a sooner one.
-- Only announced if another gateway process holds a live lease (processes other than $7, the
-- caller's own, whose waiters it wakes itself): a NOTIFY serialises committing transactions on the
-- notification queue lock and wakes every listening backend of the database, so a lone gateway
-- does not pay for it. (A gateway has a lease before it has sessions; one that starts while this
-- batch runs may miss this hint and finds the job at its next poll.)
-- $1 now (NULL: database clock), $2 tubes, $3 priorities, $4 delays (µs), $5 TTRs (µs), $6 bodies,
-- $7 the caller's own processes.
-- Returns (ord, id, heads): the 1-based position in the input, the job's id, and whether it is a
-- delayed job due first in its tube (its caller wakes a local waiter, as for a ready job).
WITH input AS (
    SELECT * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[])
        WITH ORDINALITY AS i(tube, priority, delay_us, ttr_us, body, ord)
), numbered AS (
    SELECT i.*, nextval('{{schema}}.job_ids') AS id,
        -- The statement's snapshot: the jobs of this batch are not among those compared with.
        i.delay_us > 0 AND NOT EXISTS (
            SELECT 1 FROM {{schema}}.jobs j WHERE j.tube = i.tube AND j.state = 2
              AND j.due_at <= {{now}} + i.delay_us * interval '1 microsecond') AS heads
    FROM input i ORDER BY ord
), tubes AS (
    INSERT INTO {{schema}}.tubes AS t (name, jobs_count, total_jobs)
    SELECT tube, count(*), count(*) FROM input GROUP BY tube ORDER BY tube
    ON CONFLICT (name) DO UPDATE
    SET jobs_count = t.jobs_count + excluded.jobs_count, total_jobs = t.total_jobs + excluded.total_jobs
), inserted AS (
    INSERT INTO {{schema}}.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, ready_at, body)
    SELECT id, tube, CASE WHEN delay_us > 0 THEN 2 ELSE 1 END, priority, delay_us, ttr_us, {{now}},
           CASE WHEN delay_us > 0 THEN {{now}} + delay_us * interval '1 microsecond' END,
           CASE WHEN delay_us = 0 THEN {{now}} END, body
    FROM numbered
), counted AS (
    UPDATE {{schema}}.counters SET total_jobs = total_jobs + (SELECT count(*) FROM input) WHERE id = 1
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube)
    FROM numbered WHERE (delay_us = 0 OR heads)
      AND EXISTS (SELECT 1 FROM {{schema}}.processes
                  WHERE lease_until > now() AND process <> ALL($7::text[]))
    GROUP BY tube
)
SELECT ord, id, heads FROM numbered
WHERE (SELECT count(*) FROM notified) >= 0
ORDER BY ord
