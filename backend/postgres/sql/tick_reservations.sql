-- tick_reservations: the first statement of a policy tick (policies.go). In every tube governed
-- by a max-reserves, expire-after or retry-delay policy, the reservations past their deadline
-- time out now rather than when a reserve promotes them: buried when the job has reached
-- max-reserves, else delayed by its retry backoff from its deadline (ready if that is past too),
-- else ready (and then, under expire-after, expired by tick_expire.sql if its time has come), so
-- that what a reader sees next is right. Rows another transaction holds are skipped (the next
-- tick, or a reserve's promote_tubes.sql, takes them): a tick never waits for a row.
-- $1 now (NULL: database clock).
-- Returns (id, tube, buried, delayed) per job that timed out.
WITH governed AS (
    SELECT t.name FROM {{schema}}.tubes t
    CROSS JOIN LATERAL {{schema}}.tube_policy(t.name) p
    WHERE p.max_reserves > 0 OR p.expire_after_us > 0 OR p.retry_delay_us > 0
), picked AS (
    SELECT c.id FROM governed g
    CROSS JOIN LATERAL (
        SELECT j.id FROM {{schema}}.jobs j
        WHERE j.tube = g.name AND j.state = 3 AND j.due_at <= {{now}}
        ORDER BY j.due_at LIMIT 1000) c
), acted AS (
    SELECT j.id, j.tube, j.due_at,
        -- Past its expiry, the job is tick_expire's: ready here, deleted or buried there.
        coalesce((SELECT NOT (p.expire_after_us > 0 AND j.expires_at <= {{now}})
                      AND p.max_reserves > 0 AND j.reserves >= p.max_reserves
                  FROM {{schema}}.tube_policy(j.tube) p), false) AS bury,
        coalesce((SELECT CASE WHEN p.expire_after_us > 0 AND j.expires_at <= {{now}} THEN 0
                              ELSE {{schema}}.retry_backoff_us(p, j.reserves) END
                  FROM {{schema}}.tube_policy(j.tube) p), 0) AS backoff_us
    FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state = 3 AND j.due_at <= {{now}}
    ORDER BY j.id
    FOR UPDATE SKIP LOCKED
), locked AS (
    SELECT id, tube, bury, backoff_us, due_at + backoff_us * interval '1 microsecond' AS back_at,
        NOT bury AND backoff_us > 0 AND due_at + backoff_us * interval '1 microsecond' > {{now}} AS waits
    FROM acted
), readied AS (
    UPDATE {{schema}}.jobs j
    SET state = 1, ready_at = l.back_at, due_at = NULL, reserved_by = NULL, reserved_at = NULL,
        timeouts = j.timeouts + 1, delay_us = CASE WHEN l.backoff_us > 0 THEN l.backoff_us ELSE j.delay_us END
    FROM locked l
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE NOT bury AND NOT waits)) AND l.id = j.id
    RETURNING j.tube
), delayed AS (
    UPDATE {{schema}}.jobs j
    SET state = 2, due_at = l.back_at, reserved_by = NULL, reserved_at = NULL,
        timeouts = j.timeouts + 1, delay_us = l.backoff_us
    FROM locked l
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE waits)) AND l.id = j.id
), buried AS (
    UPDATE {{schema}}.jobs j
    SET state = 4, buried_seq = nextval('{{schema}}.buried_seq'), buries = j.buries + 1,
        timeouts = j.timeouts + 1, due_at = NULL, reserved_by = NULL, reserved_at = NULL
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE bury))
), counted AS (
    INSERT INTO {{schema}}.job_timeout_counts (n)
    SELECT count(*) FROM locked HAVING count(*) > 0
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube) FROM readied GROUP BY tube
)
SELECT id, tube, bury, backoff_us > 0 AND NOT bury FROM locked
WHERE (SELECT count(*) FROM notified) >= 0
