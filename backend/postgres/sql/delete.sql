-- delete: deletes a batch of jobs, each on behalf of its session (group commit). A job may be
-- deleted when it is not reserved, or reserved by that session, or its reservation has run out
-- (that one timed out first: it counts in job-timeouts, as promote would have counted it).
-- Per-tube job counts and cmd-delete move once per tube.
-- With policies, a tube under max-reserved whose reserved job was deleted is announced (n 0: its
-- waiters look again), so that another gateway's waiting reserve takes the freed slot.
-- $1 now (NULL: database clock), $2 ids, $3 sessions.
-- Returns (id, session) per deleted job, then (NULL, tube) per tube left without references,
-- which the caller garbage-collects.
WITH input AS (
    SELECT * FROM unnest($2::bigint[], $3::text[]) AS i(id, session)
), locked AS MATERIALIZED (
    -- The job rows in id order, as every statement that waits for several takes them (see
    -- lock_tubes.sql): the DELETE alone takes them in the order its plan meets them (physical,
    -- for the bitmap scan its generic plan uses), and waited for one while holding another that
    -- a reserve's promotion, a session end or another gateway's write batch, each in id order,
    -- held while waiting for the first: a deadlock, broken only by deadlock_timeout (1 s).
    -- Jobs are found by id = ANY (an index condition), not by a join with input, whose generic
    -- plan could scan the whole primary key; the session allowed to delete is looked up after.
    SELECT j.id FROM {{schema}}.jobs j
    WHERE j.id = ANY($2::bigint[])
      AND EXISTS (SELECT 1 FROM input i
                  WHERE i.id = j.id AND (j.state <> 3 OR j.reserved_by = i.session OR j.due_at <= {{now}}))
    ORDER BY j.id
    FOR UPDATE
), deleted AS (
    DELETE FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
      AND EXISTS (SELECT 1 FROM input i
                  WHERE i.id = j.id AND (j.state <> 3 OR j.reserved_by = i.session OR j.due_at <= {{now}}))
    RETURNING j.id, j.tube,
        (SELECT i.session FROM input i
         WHERE i.id = j.id AND (j.state <> 3 OR j.reserved_by = i.session OR j.due_at <= {{now}})
         LIMIT 1) AS session,
        (j.state = 3 AND j.due_at <= {{now}}) AS expired/*P*/,
        j.state = 3 AS held/*-P*/
), /*P*/freed AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 0 ' || d.tube)
    FROM (SELECT DISTINCT tube FROM deleted WHERE held) d
    WHERE coalesce((SELECT p.max_reserved > 0 FROM {{schema}}.tube_policy(d.tube) p), false)
), /*-P*/timed_out AS (
    -- Appended, not added to the counters row (see 005_lock_free_timeouts).
    INSERT INTO {{schema}}.job_timeout_counts (n)
    SELECT count(*) FROM deleted WHERE expired HAVING count(*) > 0
), per_tube AS (
    SELECT tube, count(*) AS n FROM deleted GROUP BY tube
), tubes_locked AS MATERIALIZED (
    -- The tube rows in name order, as every statement takes them (see lock_tubes.sql): the
    -- UPDATE alone takes them in the order its plan meets them (physical, for a bitmap or
    -- sequential scan), and waited for one while holding another that a put or a session end
    -- waited for: a deadlock, broken only by deadlock_timeout (1 s).
    SELECT t.name FROM {{schema}}.tubes t
    WHERE t.name = ANY(ARRAY(SELECT tube FROM per_tube))
    ORDER BY t.name
    FOR UPDATE
), counted AS (
    UPDATE {{schema}}.tubes t
    SET jobs_count = t.jobs_count - (SELECT n FROM per_tube p WHERE p.tube = t.name),
        cmd_delete = t.cmd_delete + (SELECT n FROM per_tube p WHERE p.tube = t.name)
    WHERE t.name = ANY(ARRAY(SELECT name FROM tubes_locked))
    RETURNING t.name, t.jobs_count = 0 AND t.using_count = 0 AND t.watching_count = 0 AS unreferenced
)
SELECT id, session FROM deleted/*P*/
WHERE (SELECT count(*) FROM freed) >= 0/*-P*/
UNION ALL
SELECT NULL, name FROM counted WHERE unreferenced AND name <> 'default'
