-- tick_reservations: the first statement of a policy tick (policies.go). In every tube governed
-- by a max-reserves or expire-after policy, the reservations past their deadline time out now
-- rather than when a reserve promotes them: buried when the job has reached max-reserves, else
-- ready (and then, under expire-after, expired by tick_expire.sql if its time has come), so that
-- what a reader sees next is right. Rows another transaction holds are skipped (the next tick,
-- or a reserve's promote_tubes.sql, takes them): a tick never waits for a row.
-- $1 now (NULL: database clock).
-- Returns (id, tube, buried) per job that timed out.
WITH governed AS (
    SELECT t.name FROM {{schema}}.tubes t
    CROSS JOIN LATERAL {{schema}}.tube_policy(t.name) p
    WHERE p.max_reserves > 0 OR p.expire_after_us > 0
), picked AS (
    SELECT c.id FROM governed g
    CROSS JOIN LATERAL (
        SELECT j.id FROM {{schema}}.jobs j
        WHERE j.tube = g.name AND j.state = 3 AND j.due_at <= {{now}}
        ORDER BY j.due_at LIMIT 1000) c
), locked AS (
    SELECT j.id, j.tube,
        -- Past its expiry, the job is tick_expire's: ready here, deleted or buried there.
        coalesce((SELECT NOT (p.expire_after_us > 0 AND j.expires_at <= {{now}})
                      AND p.max_reserves > 0 AND j.reserves >= p.max_reserves
                  FROM {{schema}}.tube_policy(j.tube) p), false) AS bury
    FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state = 3 AND j.due_at <= {{now}}
    ORDER BY j.id
    FOR UPDATE SKIP LOCKED
), readied AS (
    UPDATE {{schema}}.jobs j
    SET state = 1, ready_at = j.due_at, due_at = NULL, reserved_by = NULL, reserved_at = NULL,
        timeouts = j.timeouts + 1
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE NOT bury))
    RETURNING j.tube
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
SELECT id, tube, bury FROM locked
WHERE (SELECT count(*) FROM notified) >= 0
