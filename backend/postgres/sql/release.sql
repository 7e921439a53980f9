-- release: returns job $3, reserved by session $2 and not yet past its TTR, to ready (delay $5
-- = 0) or delayed, with priority $4. Announces the tube when the job is ready, or delayed and due
-- before every other delayed job of its tube (see put.sql).
-- With policies: a job past its expiry under expire-after with bury, or else one that has reached
-- its tube's max-reserves, is buried instead (buries + 1), and nothing is announced. (Past its
-- expiry with delete, it is requeued, and the policy tick the caller runs next deletes it.)
-- Else, released with delay 0 under retry-delay, it is delayed by its backoff (and its delay is
-- that backoff).
-- Announced only if another gateway process holds a live lease (see put.sql).
-- With policies, the client's own delay is told to jobs_history (beangate.release: see 013).
-- $1 now (NULL: database clock), $2 session, $3 id, $4 priority, $5 delay (µs), $6 the caller's
-- own processes.
-- Returns (the job's tube, whether the tube was announced: local waiters are woken by the caller
-- /*P*/, the policy that buried it (or retry-delay, that delayed it) or NULL/*-P*/), or no row.
-- The conditions beside the id are wrapped in (...) IS TRUE, which no index can serve, so that the
-- job is found by its primary key: a generic plan made on a small table would otherwise scan a
-- partial index of all reservations (jobs_reserved_by, jobs_reserved_tube).
WITH /*P*/why AS (
    SELECT CASE
        WHEN p.expire_after_us > 0 AND j.expires_at <= {{now}} THEN
            CASE WHEN p.expire_action = 2 THEN 'expire-after' END
        WHEN p.max_reserves > 0 AND j.reserves >= p.max_reserves THEN 'max-reserves'
        WHEN p.retry_delay_us > 0 AND $5::bigint = 0 THEN 'retry-delay'
        END AS policy,
        {{schema}}.retry_backoff_us(p, j.reserves) AS backoff_us
    FROM {{schema}}.jobs j CROSS JOIN LATERAL {{schema}}.tube_policy(j.tube) p
    WHERE j.id = $3::bigint
), policy AS (
    SELECT coalesce((SELECT w.policy IN ('expire-after', 'max-reserves') FROM why w), false) AS bury,
        coalesce((SELECT w.policy = 'expire-after' FROM why w), false) AS expired,
        coalesce((SELECT w.backoff_us FROM why w WHERE w.policy = 'retry-delay'), $5::bigint) AS delay_us
), /*-P*/released AS (
    UPDATE {{schema}}.jobs
    SET priority = $4::bigint, delay_us = /*N*/$5::bigint/*-N*//*P*/(SELECT delay_us FROM policy)/*-P*/, releases = releases + 1, reserved_by = NULL,
        /*N*/state = CASE WHEN $5::bigint > 0 THEN 2 ELSE 1 END,
        ready_at = CASE WHEN $5::bigint > 0 THEN ready_at ELSE {{now}} END,
        due_at = CASE WHEN $5::bigint > 0 THEN {{now}} + $5::bigint * interval '1 microsecond' END/*-N*/
        /*P*/state = CASE WHEN (SELECT bury FROM policy) THEN 4 WHEN (SELECT delay_us FROM policy) > 0 THEN 2 ELSE 1 END,
        ready_at = CASE WHEN (SELECT delay_us FROM policy) > 0 OR (SELECT bury FROM policy) THEN ready_at ELSE {{now}} END,
        due_at = CASE WHEN (SELECT delay_us FROM policy) > 0 AND NOT (SELECT bury FROM policy)
                      THEN {{now}} + (SELECT delay_us FROM policy) * interval '1 microsecond' END,
        buries = buries + (SELECT bury FROM policy)::int,
        buried_seq = CASE WHEN (SELECT bury FROM policy) THEN nextval('{{schema}}.buried_seq') END,
        expires_at = CASE WHEN (SELECT expired FROM policy) THEN 'infinity' ELSE expires_at END/*-P*/
    WHERE id = $3::bigint AND (state = 3 AND reserved_by = $2::text AND due_at > {{now}}) IS TRUE
/*P*/      AND (SELECT set_config('beangate.release', $3::bigint || ' ' || $5::bigint, true)) IS NOT NULL
/*-P*/    RETURNING tube, state, due_at
), announced AS (
    -- The statement's snapshot: the released job is not yet among the delayed ones.
    SELECT tube FROM released r WHERE r.state = 1 OR /*P*/r.state = 2 AND /*-P*/NOT EXISTS (
        SELECT 1 FROM {{schema}}.jobs j WHERE j.tube = r.tube AND j.state = 2 AND j.due_at <= r.due_at)
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 1 ' || tube) FROM announced
    WHERE EXISTS (SELECT 1 FROM {{schema}}.processes
                  WHERE lease_until > now() AND process <> ALL($6::text[]))
/*P*/), freed AS (
    -- A job not made ready frees a slot of a max-reserved tube all the same.
    SELECT pg_notify({{channel}}, {{origin}} || ' 0 ' || r.tube) FROM released r
    WHERE r.state <> 1 AND coalesce((SELECT p.max_reserved > 0 FROM {{schema}}.tube_policy(r.tube) p), false)
/*-P*/)
SELECT tube, EXISTS (SELECT 1 FROM announced)/*P*/, (SELECT policy FROM why)/*-P*/ FROM released WHERE (SELECT count(*) FROM notified) >= 0/*P*/ AND (SELECT count(*) FROM freed) >= 0/*-P*/
