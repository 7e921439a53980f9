-- reserve_many: reserves for each of the sessions $3 (in the order they asked: the first gets
-- the best job) the eligible job with the lowest (priority, id) over the watched tubes $2 that
-- are not paused, all sessions watching the same tubes. Eligible: ready, delayed whose time has
-- come, or reserved whose TTR has passed (that one counts a timeout). Rows are found through
-- indexes with LIMIT and SKIP LOCKED, so concurrent reserves take different jobs without waiting
-- and a reserve stays O(log n) however many jobs are queued. This is how concurrent reserves
-- share one statement and one commit.
-- Due rows are promoted, not sorted: per tube the statement takes the delayed jobs whose time
-- has come and the expired reservations in due_at order (jobs_delayed_tube, jobs_reserved_tube),
-- at most 500 (+ one per session) of each, and makes every one of them it does not reserve ready
-- (an expired one counting its timeout and losing its owner, as in promote.sql). Sorting every
-- due row of a tube by (priority, id) instead read them all on every reserve: with 100,000
-- matured delayed jobs ~2,000 pages per reserve, for every reserve until the backlog drained,
-- one job at a time. Now a backlog costs each reserve at most one batch (10-15 ms for 500 rows)
-- until it is all ready (200 reserves for 100,000), and the search itself walks indexes in
-- (priority, id) order with LIMIT. The statement's snapshot does not see its own promotions as
-- ready, so the candidates are the best ready jobs plus the rows it promotes. Order: exact
-- (priority, id) whenever at most 500 jobs of a tube came due since the last reserve or promote
-- step; beyond that, a job still waiting in the backlog may be passed over by a worse one already
-- promoted, until its own batch is promoted (each reserve promotes the next 500).
-- A reservation is not worth a WAL flush (beanstalkd does not log it either; after a crash the
-- job is simply ready again), hence synchronous_commit off for this transaction.
-- A session that gets no job gets, in the same round trip, what it needs in order to wait: the
-- time the attempt was made at, the earliest TTR deadline of its own live reservations (for
-- DEADLINE_SOON), and the next moment something may become reservable in the watched tubes: a
-- delayed job's time, a reservation's deadline (those taken by this statement included), or a
-- pause's end. (A session goes unserved only when every due row was taken: the due branches
-- take at least one row per session.)
-- $1 now (NULL: database clock), $2 tubes, $3 sessions.
-- Returns per session either (session, job, NULL, NULL, NULL) or (session, NULLs, now,
-- own deadline, next due).
WITH active AS (
    SELECT w.name
    FROM unnest($2::text[]) AS w(name)
    -- A scalar subquery per tube (not an anti join) so that the tube row is found by its key.
    WHERE (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = w.name) IS NOT TRUE
), due AS (
    -- Promoted by this statement: reserved below if among the best, else made ready.
    -- Meant for jobs_delayed_tube / jobs_reserved_tube (tube, due_at). When the statistics show a
    -- single tube the planner may take jobs_delayed_due / jobs_reserved_due (due_at) instead,
    -- filtering on the tube: as good while that holds; ANALYZE changes the plan when it does not.
    SELECT c.id, c.priority, c.expired
    FROM active a
    CROSS JOIN LATERAL (
        SELECT * FROM (
            SELECT j.id, j.priority, false AS expired FROM {{schema}}.jobs j
            WHERE j.tube = a.name AND j.state = 2 AND j.due_at <= {{now}}
            ORDER BY j.due_at LIMIT 500 + cardinality($3::text[]) FOR UPDATE SKIP LOCKED) delayed
        UNION ALL
        SELECT * FROM (
            SELECT j.id, j.priority, true FROM {{schema}}.jobs j
            WHERE j.tube = a.name AND j.state = 3 AND j.due_at <= {{now}}
            ORDER BY j.due_at LIMIT 500 + cardinality($3::text[]) FOR UPDATE SKIP LOCKED) expired
    ) c
), candidates AS (
    SELECT c.id, c.priority
    FROM active a
    CROSS JOIN LATERAL (
        SELECT j.id, j.priority FROM {{schema}}.jobs j
        WHERE j.tube = a.name AND j.state = 1
        ORDER BY j.priority, j.id LIMIT cardinality($3::text[]) FOR UPDATE SKIP LOCKED) c
    UNION ALL
    SELECT id, priority FROM due
), best AS (
    -- In (priority, id) order: the n-th goes to the n-th session.
    SELECT coalesce(array_agg(id ORDER BY priority, id), '{}') AS ids
    FROM (SELECT id, priority FROM candidates ORDER BY priority, id LIMIT cardinality($3::text[])) b
), reserved AS (
    -- j.id = ANY (an index condition), not a join with best: a generic plan made while the table
    -- was small would join through a full scan of the primary key. An expired reservation is the
    -- row whose state is still 3 here: it counts a timeout, whether reserved again or not.
    UPDATE {{schema}}.jobs j
    SET state = 3, reserved_by = ($3::text[])[array_position((SELECT ids FROM best), j.id)],
        due_at = {{now}} + j.ttr_us * interval '1 microsecond',
        buried_seq = NULL, reserves = j.reserves + 1, timeouts = j.timeouts + (j.state = 3)::int
    WHERE j.id = ANY((SELECT ids FROM best)::bigint[])
    RETURNING j.id, j.tube, j.priority, j.body, j.reserved_by, j.due_at
), promoted AS (
    -- The other due rows taken (a row set disjoint from reserved's).
    UPDATE {{schema}}.jobs j
    SET state = 1, due_at = NULL, reserved_by = NULL, timeouts = j.timeouts + (j.state = 3)::int
    WHERE j.id = ANY(ARRAY(SELECT id FROM due WHERE id <> ALL((SELECT ids FROM best)::bigint[])))
), counted AS (
    -- Every locked expired row was updated, reserved again or not.
    UPDATE {{schema}}.counters SET job_timeouts = job_timeouts + (SELECT count(*) FROM due WHERE expired)
    WHERE id = 1 AND EXISTS (SELECT 1 FROM due WHERE expired)
), unserved AS (
    SELECT s.session FROM unnest($3::text[]) AS s(session)
    WHERE s.session <> ALL(ARRAY(SELECT reserved_by FROM reserved))
)
SELECT reserved_by, id, tube, priority, body, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz
FROM reserved
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
UNION ALL
SELECT u.session, NULL, NULL, NULL, NULL, {{now}},
    -- FILTER, not a WHERE on due_at: a generic plan may otherwise take min() from jobs_reserved_due
    -- in deadline order, filtering on the session: a scan of every session's reservations.
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
        WHERE name = ANY($2::text[]) AND pause_until > {{now}}
    ) next)
FROM unserved u
