-- reserve_many: reserves for each of the sessions $3 (in the order they asked: the first gets
-- the best job) the ready job with the lowest (priority, id) over the watched tubes $2 that are
-- not paused, all sessions watching the same tubes. Delayed jobs whose time has come and expired
-- reservations of these tubes must be ready first: unless $4 says that promote_tubes has just run
-- in this transaction, a statement that finds such a job in any of the tubes reserves nothing and
-- answers every session "promote first"; its caller then runs promote_tubes and this statement
-- with $4 true, in a transaction of their own. Most reserves find nothing due and so cost one
-- statement, not two (the check is two index probes per tube; promote_tubes, even with nothing
-- to promote, sets up an UPDATE and an INSERT). See promote_tubes.sql for the bound on a
-- backlog of due jobs: the order is exact whenever at most 500 jobs of a tube came due since the
-- last reserve or promote step; beyond that, a job still waiting in the backlog may be passed over
-- by a worse one already promoted, until its own batch is promoted. Rows are found through the jobs_ready index with
-- LIMIT and SKIP LOCKED, so concurrent reserves take different jobs without waiting and a reserve
-- stays O(log n) however many jobs are queued. This is how concurrent reserves share one
-- statement and one commit.
-- A reservation is not worth a WAL flush (beanstalkd does not log it either; after a crash the
-- job is simply ready again), hence synchronous_commit off for this transaction.
-- A session that gets no job gets, in the same round trip, what it needs in order to wait: the
-- time the attempt was made at, the earliest TTR deadline of its own live reservations (for
-- DEADLINE_SOON), and the next moment something may become reservable in the watched tubes: a
-- delayed job's time, a reservation's deadline (those taken by this statement included), or a
-- pause's end.
-- With policies, a tube whose max-reserved live reservations are taken, or whose rate bucket
-- holds no token, counts as having nothing ready, and a tube gives at most as many jobs as it
-- has slots and tokens; the tokens spent are recorded (tube_rates), and the moment the next one
-- accrues is one of the next due moments. The caller holds the advisory locks of the batch's
-- capped and rate-limited tubes (lock_policy_tubes.sql), taken before this statement's snapshot.
-- $1 now (NULL: database clock), $2 tubes, $3 sessions, $4 promote_tubes has just run.
-- Returns per session either (session, job, NULL, NULL, deadline, µs the job was ready, false) or
-- (session, NULLs, now, own deadline, next due, NULL, false), or, when due jobs must be promoted
-- first, (session, NULLs, true); with policies, each row ends with the watched tubes a policy
-- held back although they had ready jobs.
WITH due AS (
    -- Every watched tube, paused or not, as promote_tubes does. Scalar subqueries, not EXISTS,
    -- which the planner would turn into a hashed scan of every tube's due entries: each is an
    -- index range of jobs_delayed_tube or jobs_reserved_tube (tube, due_at), any row will do.
    SELECT NOT $4::boolean AND EXISTS (
        SELECT 1 FROM unnest($2::text[]) AS w(name)
        WHERE (SELECT true FROM {{schema}}.jobs j
               WHERE j.tube = w.name AND j.state = 2 AND j.due_at <= {{now}} LIMIT 1)
           OR (SELECT true FROM {{schema}}.jobs j
               WHERE j.tube = w.name AND j.state = 3 AND j.due_at <= {{now}} LIMIT 1)) AS first
), /*P*/limits AS (
    -- How many jobs each watched tube may give now (NULL: no limit), and its rate's interval.
    SELECT w.name, p.rate, least(
        CASE WHEN p.max_reserved > 0 THEN p.max_reserved - (
            SELECT count(*) FROM {{schema}}.jobs j
            WHERE j.tube = w.name AND j.state = 3 AND j.due_at > {{now}}) END,
        CASE WHEN p.rate > 0 THEN floor(greatest(p.burst, 1) - extract(epoch FROM
            greatest(r.tat, {{now}}) - {{now}})::float8 * p.rate + 1e-9)::bigint END) AS slots,
        r.tat
    FROM unnest($2::text[]) AS w(name)
    CROSS JOIN LATERAL {{schema}}.tube_policy(w.name) p
    LEFT JOIN {{schema}}.tube_rates r ON r.tube = w.name
), /*-P*/active AS (
    SELECT w.name/*P*/, l.slots/*-P*/
    FROM unnest($2::text[]) AS w(name)/*P*/
    JOIN limits l ON l.name = w.name/*-P*/
    -- A scalar subquery per tube (not an anti join) so that the tube row is found by its key.
    WHERE (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = w.name) IS NOT TRUE
      AND NOT (SELECT first FROM due)/*P*/
      AND coalesce(l.slots > 0, true)/*-P*/
), candidates AS (
    SELECT c.id, c.priority
    FROM active a
    CROSS JOIN LATERAL (
        SELECT j.id, j.priority FROM {{schema}}.jobs j
        WHERE j.tube = a.name AND j.state = 1/*P*/
          AND (j.expires_at IS NULL OR j.expires_at > {{now}})/*-P*/
        ORDER BY j.priority, j.id
        LIMIT /*N*/cardinality($3::text[])/*-N*//*P*/least(cardinality($3::text[]), a.slots)/*-P*/
        FOR UPDATE SKIP LOCKED) c
), best AS (
    -- In (priority, id) order: the n-th goes to the n-th session.
    SELECT coalesce(array_agg(id ORDER BY priority, id), '{}') AS ids
    FROM (SELECT id, priority FROM candidates ORDER BY priority, id LIMIT cardinality($3::text[])) b
), reserved AS (
    -- j.id = ANY (an index condition), not a join with best: a generic plan made while the table
    -- was small would join through a full scan of the primary key.
    UPDATE {{schema}}.jobs j
    SET state = 3, reserved_by = ($3::text[])[array_position((SELECT ids FROM best), j.id)],
        due_at = {{now}} + j.ttr_us * interval '1 microsecond', reserved_at = {{now}},
        buried_seq = NULL, reserves = j.reserves + 1
    WHERE j.id = ANY((SELECT ids FROM best)::bigint[])
    RETURNING j.id, j.tube, j.priority, j.body, j.reserved_by, j.due_at, j.ready_at
/*P*/), rated AS (
    -- GCRA: each job taken moves the tube's theoretical arrival time one interval on.
    INSERT INTO {{schema}}.tube_rates AS t (tube, tat)
    SELECT r.tube, greatest(l.tat, {{now}}) + count(*) * interval '1 second' / l.rate
    FROM reserved r JOIN limits l ON l.name = r.tube
    WHERE l.rate > 0
    GROUP BY r.tube, l.tat, l.rate
    ON CONFLICT (tube) DO UPDATE SET tat = excluded.tat
), held AS (
    -- The tubes a policy held back although they had a ready job left.
    SELECT coalesce(array_agg(l.name), '{}') AS tubes FROM limits l
    WHERE l.slots < cardinality($3::text[]) AND NOT (SELECT first FROM due)
      AND EXISTS (SELECT 1 FROM {{schema}}.jobs j WHERE j.tube = l.name AND j.state = 1
                  AND j.id <> ALL(ARRAY(SELECT id FROM reserved)))
/*-P*/), unserved AS (
    SELECT s.session FROM unnest($3::text[]) AS s(session)
    WHERE s.session <> ALL(ARRAY(SELECT reserved_by FROM reserved))
)
SELECT reserved_by, id, tube, priority, body, NULL::timestamptz, NULL::timestamptz, due_at,
    -- How long it was ready (µs; NULL: not known). Never negative: another transaction may have
    -- made it ready after this one's now().
    greatest(0, (extract(epoch FROM {{now}} - ready_at) * 1000000)::bigint),
    false/*P*/,
    (SELECT tubes FROM held)/*-P*/
FROM reserved
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
UNION ALL
SELECT u.session, NULL, NULL, NULL, NULL, {{now}},
    -- FILTER, not a WHERE on due_at: a generic plan could otherwise take min() from an index in
    -- deadline order, filtering on the session: a scan of every session's reservations (the
    -- (due_at) index on reservations, dropped in 008, was such a path).
    (SELECT min(j.due_at) FILTER (WHERE j.due_at > {{now}}) FROM {{schema}}.jobs j
     WHERE j.state = 3 AND j.reserved_by = u.session),
    (SELECT min(at) FROM (
        SELECT (SELECT min(j.due_at) FROM {{schema}}.jobs j
                WHERE j.state = 2 AND j.tube = w.name AND j.due_at > {{now}}) AS at
        FROM unnest($2::text[]) AS w(name)
        UNION ALL
        SELECT (SELECT min(j.due_at) FROM {{schema}}.jobs j
                WHERE j.state = 3 AND j.tube = w.name AND j.due_at > {{now}})
        FROM unnest($2::text[]) AS w(name)
        UNION ALL
        SELECT min(due_at) FROM reserved -- not yet visible to the subqueries above
        UNION ALL
        SELECT pause_until FROM {{schema}}.tubes
        WHERE name = ANY($2::text[]) AND pause_until > {{now}}/*P*/
        UNION ALL
        -- When a held-back rate's next token accrues (k >= 1: tat - (burst - 1)/rate <= now).
        SELECT l.tat - (greatest(p.burst, 1) - 1) * interval '1 second' / l.rate
        FROM limits l CROSS JOIN LATERAL {{schema}}.tube_policy(l.name) p
        WHERE l.rate > 0 AND l.slots <= 0/*-P*/
    ) next),
    NULL,
    (SELECT first FROM due)/*P*/,
    (SELECT tubes FROM held)/*-P*/
FROM unserved u
