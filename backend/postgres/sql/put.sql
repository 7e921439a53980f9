-- put: inserts a batch of jobs (group commit: the puts of many sessions arriving together share
-- one statement and one WAL flush). Tube rows are created if needed and locked in name order, and
-- the counters row after them, so concurrent batches cannot deadlock on them. Tubes receiving
-- ready jobs are announced, and so are tubes receiving a delayed job due before every delayed job
-- already there: a waiting reserve times its next try by the earliest due time it saw, so it must
-- learn of a sooner one.
-- Only announced if another gateway process holds a live lease (processes other than $7, the
-- caller's own, whose waiters it wakes itself): a NOTIFY serialises committing transactions on the
-- notification queue lock and wakes every listening backend of the database, so a lone gateway
-- does not pay for it. (A gateway has a lease before it has sessions; one that starts while this
-- batch runs may miss this hint and finds the job at its next poll.)
-- $1 now (NULL: database clock), $2 tubes, $3 priorities, $4 delays (µs), $5 TTRs (µs), $6 bodies,
-- $7 the caller's own processes, $8 per put the session of a local reserve waiting on its tube
-- (NULL: none), $9 that reserve's watched tubes (space-separated: names have no spaces).
-- A put with a waiting reserve hands its job to it: the row is inserted reserved by that session,
-- so a woken worker costs no reserve statement of its own, and the reservation is as durable as
-- the put. Only when the reserve would have taken this very job: its tube is not paused, no ready
-- job of an unpaused watched tube is as good (nor an earlier put of this batch), nothing there is
-- due to be promoted, and none of the session's reservations is within a second of its deadline
-- (DEADLINE_SOON). Otherwise the job is inserted ready and the reserve tries as usual.
-- Returns (ord, id, heads, handed, due): the 1-based position in the input, the job's id, whether
-- it is a delayed job due first in its tube (its caller wakes a local waiter, as for a ready job),
-- whether it went to its waiting reserve, and then that reservation's deadline.
-- With policies, each job also gets its tube's: its expiry (created + expire-after) and, in a
-- unique tube, its body's hash; and a put into a unique tube whose body equals that of a ready or
-- delayed job of the tube (found through jobs_body_hash, then compared whole), or of an earlier
-- put of this batch, stores nothing and answers that job's id (deduped). The caller holds the
-- advisory locks of the batch's unique tubes (lock_policy_tubes.sql), taken before this
-- statement's snapshot, so a duplicate another gateway committed is seen.
-- Returns, with policies, a sixth column: whether the id is an existing job's.
-- With policies, $10 names each put's session: in a tube whose policy keeps histories, the job's
-- starts with its put (the trigger of 013 appends the rest).
WITH input AS (
    SELECT /*N*/*/*-N*//*P*/i.*, coalesce(p.uniq, false) AS uniq, p.expire_after_us,
        CASE WHEN p.uniq THEN sha256(i.body) END AS hash, coalesce(p.history, false) AS keeps_history/*-P*/
    FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[], $8::text[], $9::text[]/*P*/,
                $10::text[]/*-P*/)
        WITH ORDINALITY AS i(tube, priority, delay_us, ttr_us, body, hand, watch/*P*/, producer/*-P*/, ord)/*P*/
    CROSS JOIN LATERAL {{schema}}.tube_policy(i.tube) p
), firsts AS (
    -- In a unique tube, the first put of each body in this batch.
    SELECT i.ord, min(i.ord) OVER (PARTITION BY i.tube, i.body) AS first FROM input i WHERE i.uniq
), existing AS (
    SELECT f.ord, (SELECT j.id FROM {{schema}}.jobs j
                   WHERE j.tube = i.tube AND j.body_hash = i.hash AND j.state IN (1, 2) AND j.body = i.body
                   ORDER BY j.id LIMIT 1) AS id
    FROM firsts f JOIN input i ON i.ord = f.ord WHERE f.first = f.ord
), fresh AS (
    -- The puts that store a job.
    SELECT i.* FROM input i
    WHERE NOT i.uniq OR (SELECT e.id FROM existing e WHERE e.ord = i.ord) IS NULL
        AND (SELECT f.first FROM firsts f WHERE f.ord = i.ord) = i.ord/*-P*/
), numbered AS (
    SELECT i.*, nextval('{{schema}}.job_ids') AS id,
        -- The statement's snapshot: the jobs of this batch are not among those compared with.
        i.delay_us > 0 AND NOT EXISTS (
            SELECT 1 FROM {{schema}}.jobs j WHERE j.tube = i.tube AND j.state = 2
              AND j.due_at <= {{now}} + i.delay_us * interval '1 microsecond') AS heads,
        i.hand IS NOT NULL AND i.delay_us = 0
        AND (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = i.tube) IS NOT TRUE
        AND NOT EXISTS (
            SELECT 1 FROM unnest(string_to_array(i.watch, ' ')) AS w(name)
            WHERE (SELECT true FROM {{schema}}.jobs j
                   WHERE j.tube = w.name AND j.state = 1 AND j.priority <= i.priority LIMIT 1)
                  AND (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = w.name) IS NOT TRUE
               OR (SELECT true FROM {{schema}}.jobs j
                   WHERE j.tube = w.name AND j.state = 2 AND j.due_at <= {{now}} LIMIT 1)
               OR (SELECT true FROM {{schema}}.jobs j
                   WHERE j.tube = w.name AND j.state = 3 AND j.due_at <= {{now}} LIMIT 1)
               OR EXISTS (SELECT 1 FROM /*N*/input/*-N*//*P*/fresh/*-P*/ e
                          WHERE e.ord < i.ord AND e.tube = w.name AND e.delay_us = 0
                            AND e.hand IS NULL AND e.priority <= i.priority))
        AND NOT EXISTS (
            SELECT 1 FROM {{schema}}.jobs j
            WHERE j.state = 3 AND j.reserved_by = i.hand AND j.due_at <= {{now}} + interval '1 second') AS handed
    FROM /*N*/input/*-N*//*P*/fresh/*-P*/ i ORDER BY ord
), tubes AS (
    INSERT INTO {{schema}}.tubes AS t (name, jobs_count, total_jobs)
    SELECT tube, count(*), count(*) FROM /*N*/input/*-N*//*P*/fresh/*-P*/ GROUP BY tube ORDER BY tube
    ON CONFLICT (name) DO UPDATE
    SET jobs_count = t.jobs_count + excluded.jobs_count, total_jobs = t.total_jobs + excluded.total_jobs
    RETURNING t.name
), inserted AS (
    INSERT INTO {{schema}}.jobs (id, tube, state, priority, delay_us, ttr_us, created_at, due_at, ready_at,
        reserved_by, reserved_at, reserves, body/*P*/, body_hash, expires_at, history/*-P*/)
    SELECT id, tube, CASE WHEN handed THEN 3 WHEN delay_us > 0 THEN 2 ELSE 1 END, priority, delay_us, ttr_us, {{now}},
           CASE WHEN handed THEN {{now}} + ttr_us * interval '1 microsecond'
                WHEN delay_us > 0 THEN {{now}} + delay_us * interval '1 microsecond' END,
           CASE WHEN delay_us = 0 THEN {{now}} END,
           CASE WHEN handed THEN hand END, CASE WHEN handed THEN {{now}} END, CASE WHEN handed THEN 1 ELSE 0 END,
           body/*P*/, hash,
           CASE WHEN expire_after_us > 0 THEN {{now}} + expire_after_us * interval '1 microsecond' END,
           CASE WHEN keeps_history THEN ARRAY[{{schema}}.job_event('put', producer, delay_us, '')] END/*-P*/
    FROM numbered
), counted AS (
    -- After the tube rows, as every statement takes them (see lock_tubes.sql): the condition
    -- runs tubes first. Left to itself, this CTE ran before tubes (PostgreSQL finishes unread
    -- CTEs last one first) and held this row while it waited for a tube row, which another
    -- gateway's batch with deletes held while it waited for this one: a deadlock.
    UPDATE {{schema}}.counters SET total_jobs = total_jobs + (SELECT count(*) FROM /*N*/input/*-N*//*P*/fresh/*-P*/) WHERE id = 1
      AND (SELECT count(*) FROM tubes) >= 0
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube)
    FROM numbered WHERE (delay_us = 0 AND NOT handed OR heads)
      AND EXISTS (SELECT 1 FROM {{schema}}.processes
                  WHERE lease_until > now() AND process <> ALL($7::text[]))
    GROUP BY tube
)
SELECT ord, id, heads, handed, CASE WHEN handed THEN {{now}} + ttr_us * interval '1 microsecond' END/*P*/, false/*-P*/
FROM numbered
WHERE (SELECT count(*) FROM notified) >= 0/*P*/
UNION ALL
-- A duplicate: of a job already stored, or of this batch's first put of its body.
SELECT f.ord, coalesce(e.id, n.id), false, false, NULL, true
FROM firsts f
LEFT JOIN existing e ON e.ord = f.first
LEFT JOIN numbered n ON n.ord = f.first
WHERE f.ord <> f.first OR e.id IS NOT NULL/*-P*/
ORDER BY ord
