-- reserve_many: reserves for each of the sessions $3 (in the order they asked: the first gets
-- the best job) the eligible job with the lowest (priority, id) over the watched tubes $2 that
-- are not paused, all sessions watching the same tubes. Eligible: ready, delayed whose time has
-- come, or reserved whose TTR has passed (that one counts a timeout). Per tube each kind is found
-- through its own index with LIMIT n and SKIP LOCKED, so concurrent reserves take different jobs
-- without waiting. This is how concurrent reserves share one statement and one commit.
-- A reservation is not worth a WAL flush (beanstalkd does not log it either; after a crash the
-- job is simply ready again), hence synchronous_commit off for this transaction.
-- $1 now (NULL: database clock), $2 tubes, $3 sessions.
-- Returns (session, job) per reserved job: sessions beyond the jobs found get no row.
WITH active AS (
    SELECT w.name
    FROM unnest($2::text[]) AS w(name)
    -- A scalar subquery per tube (not an anti join) so that the tube row is found by its key.
    WHERE (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = w.name) IS NOT TRUE
), candidates AS (
    SELECT c.id, c.priority, c.expired
    FROM active a
    CROSS JOIN LATERAL (
        SELECT * FROM (
            SELECT j.id, j.priority, false AS expired FROM {{schema}}.jobs j
            WHERE j.tube = a.name AND j.state = 1
            ORDER BY j.priority, j.id LIMIT cardinality($3::text[]) FOR UPDATE SKIP LOCKED) ready
        UNION ALL
        SELECT * FROM (
            SELECT j.id, j.priority, false FROM {{schema}}.jobs j
            WHERE j.tube = a.name AND j.state = 2 AND j.due_at <= {{now}}
            ORDER BY j.priority, j.id LIMIT cardinality($3::text[]) FOR UPDATE SKIP LOCKED) due
        UNION ALL
        SELECT * FROM (
            SELECT j.id, j.priority, true FROM {{schema}}.jobs j
            WHERE j.tube = a.name AND j.state = 3 AND j.due_at <= {{now}}
            ORDER BY j.priority, j.id LIMIT cardinality($3::text[]) FOR UPDATE SKIP LOCKED) expired
    ) c
), best AS (
    SELECT id, expired, row_number() OVER (ORDER BY priority, id) AS n
    FROM candidates ORDER BY priority, id LIMIT cardinality($3::text[])
), reserved AS (
    -- j.id = ANY (an index condition), not a join with best: a generic plan made while the table
    -- was small would join through a full scan of the primary key.
    UPDATE {{schema}}.jobs j
    SET state = 3, reserved_by = ($3::text[])[(SELECT b.n FROM best b WHERE b.id = j.id)],
        due_at = {{now}} + j.ttr_us * interval '1 microsecond',
        buried_seq = NULL, reserves = j.reserves + 1,
        timeouts = j.timeouts + (SELECT b.expired FROM best b WHERE b.id = j.id)::int
    WHERE j.id = ANY(ARRAY(SELECT id FROM best))
    RETURNING j.id, j.tube, j.priority, j.body, j.reserved_by,
        (SELECT b.expired FROM best b WHERE b.id = j.id) AS expired
), counted AS (
    UPDATE {{schema}}.counters SET job_timeouts = job_timeouts + (SELECT count(*) FROM reserved WHERE expired)
    WHERE id = 1 AND EXISTS (SELECT 1 FROM reserved WHERE expired)
)
SELECT reserved_by, id, tube, priority, body FROM reserved
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
