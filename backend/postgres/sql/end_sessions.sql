-- end_sessions: forgets sessions $2 ($1 now, NULL: the database clock): their reserved jobs
-- return to ready at once (counters unchanged), their tube references are dropped (gc_tubes runs
-- after it). Announces the tubes that got ready jobs and returns the jobs, in the order they were reserved, with their tubes and
-- whether the tube is paused now, for the local waiters (a job goes to a waiting reserve in that
-- order, as beanstalkd hands them out). Not worth a WAL flush: after a crash the sessions are
-- gone and their reservations ready anyway. With policies, a job past its expiry under
-- expire-after with bury, or else one that has reached its tube's max-reserves, is buried
-- instead, and neither announced nor returned (past its expiry with delete, the policy tick the
-- caller runs next deletes it); else one under retry-delay is delayed by its backoff from when it
-- came back (ready, and returned, if that has passed too), and its tube announced to every
-- waiter (n = 0), whose timers do not know the new due time.
WITH ended AS (
    DELETE FROM {{schema}}.sessions WHERE id = ANY($2::text[]) RETURNING used_tube
), unwatched AS (
    DELETE FROM {{schema}}.session_watches WHERE session_id = ANY($2::text[]) RETURNING tube
), locked AS MATERIALIZED (
    -- Job rows first and in id order, then tube rows in name order, as the other statements
    -- that lock several of them take them (promote_tubes, delete, put), so that none can
    -- deadlock. A reservation already past its deadline times out first (counted), as at its
    -- deadline; the values are those of the row version locked.
    SELECT id, due_at <= {{now}} AS expired/*P*/,
        coalesce((SELECT CASE WHEN p.expire_after_us > 0 AND expires_at <= {{now}} THEN p.expire_action = 2
                              ELSE p.max_reserves > 0 AND reserves >= p.max_reserves END
                  FROM {{schema}}.tube_policy(tube) p), false) AS bury,
        expires_at <= {{now}} AS expired_policy,
        coalesce((SELECT CASE WHEN p.expire_after_us > 0 AND expires_at <= {{now}} THEN 0
                              ELSE {{schema}}.retry_backoff_us(p, reserves) END
                  FROM {{schema}}.tube_policy(tube) p), 0) AS backoff_us,
        least(due_at, {{now}}) AS came_at/*-P*/
    FROM {{schema}}.jobs
    WHERE state = 3 AND reserved_by = ANY($2::text[])
    ORDER BY id
    FOR UPDATE
/*P*/), backoff AS (
    SELECT id, came_at + backoff_us * interval '1 microsecond' AS back_at,
        NOT bury AND backoff_us > 0 AND came_at + backoff_us * interval '1 microsecond' > {{now}} AS waits
    FROM locked
/*-P*/), counted AS (
    INSERT INTO {{schema}}.job_timeout_counts (n)
    SELECT count(*) FROM locked WHERE expired HAVING count(*) > 0
), returned AS (
    UPDATE {{schema}}.jobs j
    -- A reservation past its deadline became ready at it.
    SET state = 1, reserved_by = NULL, timeouts = j.timeouts + l.expired::int,
        ready_at = /*N*/least(j.due_at, {{now}})/*-N*//*P*/k.back_at,
        delay_us = CASE WHEN l.backoff_us > 0 AND NOT l.bury THEN l.backoff_us ELSE j.delay_us END/*-P*/, due_at = NULL
    FROM locked l/*P*/ JOIN backoff k ON k.id = l.id/*-P*/
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked/*P*/ WHERE NOT bury AND id <> ALL(ARRAY(SELECT id FROM backoff WHERE waits))/*-P*/)) AND l.id = j.id
    RETURNING j.id, j.tube, j.reserved_at
/*P*/), delayed AS (
    UPDATE {{schema}}.jobs j
    SET state = 2, reserved_by = NULL, timeouts = j.timeouts + l.expired::int, due_at = k.back_at,
        delay_us = l.backoff_us
    FROM locked l JOIN backoff k ON k.id = l.id
    WHERE j.id = ANY(ARRAY(SELECT id FROM backoff WHERE waits)) AND l.id = j.id
    RETURNING j.tube
), buried AS (
    UPDATE {{schema}}.jobs j
    SET state = 4, reserved_by = NULL, timeouts = j.timeouts + l.expired::int, due_at = NULL,
        buries = j.buries + 1, buried_seq = nextval('{{schema}}.buried_seq'),
        expires_at = CASE WHEN l.expired_policy THEN 'infinity' ELSE j.expires_at END
    FROM locked l
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE bury)) AND l.id = j.id
/*-P*/), refs AS (
    SELECT tube, sum(u) AS u, sum(w) AS w FROM (
        SELECT used_tube AS tube, 1 AS u, 0 AS w FROM ended
        UNION ALL
        SELECT tube, 0, 1 FROM unwatched
    ) r GROUP BY tube
), dropped AS (
    -- The tubes exist (the sessions reference them): nothing is inserted.
    INSERT INTO {{schema}}.tubes AS t (name, using_count, watching_count)
    SELECT refs.tube, -refs.u, -refs.w FROM refs
    WHERE EXISTS (SELECT 1 FROM {{schema}}.tubes x WHERE x.name = refs.tube)
      AND (SELECT count(*) FROM returned) >= 0
    ORDER BY refs.tube
    ON CONFLICT (name) DO UPDATE
    SET using_count = t.using_count + excluded.using_count,
        watching_count = t.watching_count + excluded.watching_count
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube) FROM returned GROUP BY tube
/*P*/    UNION ALL
    SELECT pg_notify({{channel}}, {{origin}} || ' 0 ' || tube) FROM delayed GROUP BY tube
/*-P*/)
SELECT array(SELECT id FROM returned r ORDER BY r.reserved_at, r.id),
       array(SELECT tube FROM returned r ORDER BY r.reserved_at, r.id),
       array(SELECT coalesce(t.pause_until > {{now}}, false) FROM returned r
             LEFT JOIN {{schema}}.tubes t ON t.name = r.tube ORDER BY r.reserved_at, r.id)
WHERE (SELECT count(*) FROM notified) >= 0
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
