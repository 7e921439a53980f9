-- kick: moves up to $2 jobs of tube $1 to ready: buried ones, oldest first, if the tube has any,
-- else delayed ones, soonest first; never both. Announces the tube if any moved, and returns the
-- first ones moved for the local waiting reserves.
-- Delayed: those whose time has not come (the others are ready).
-- $1 now (NULL: database clock), $2 tube, $3 bound.
WITH has_buried AS (
    SELECT EXISTS (SELECT 1 FROM {{schema}}.jobs WHERE tube = $2::text AND state = 4) AS yes
), picked AS (
    SELECT * FROM (
        SELECT id, buried_seq AS seq, NULL::timestamptz AS due FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 4 AND (SELECT yes FROM has_buried)
        ORDER BY buried_seq LIMIT $3::bigint FOR UPDATE SKIP LOCKED) buried
    UNION ALL
    SELECT * FROM (
        SELECT id, NULL::bigint, due_at FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 2 AND due_at > {{now}} AND NOT (SELECT yes FROM has_buried)
        ORDER BY due_at, id LIMIT $3::bigint FOR UPDATE SKIP LOCKED) delayed
), kicked AS (
    UPDATE {{schema}}.jobs SET state = 1, ready_at = {{now}}, due_at = NULL, buried_seq = NULL, kicks = kicks + 1
    WHERE id = ANY(ARRAY(SELECT id FROM picked)) -- an index condition, not a semi join
    RETURNING id
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || n || ' ' || $2::text)
    FROM (SELECT count(*) AS n FROM kicked) k WHERE n > 0
)
SELECT (SELECT count(*) FROM kicked), (SELECT count(*) FROM notified),
    -- The first 64 in the order they moved, unless the tube is paused: the gateway hands them to
    -- its waiting reserves in that order, as beanstalkd hands kicked jobs out one by one.
    array(SELECT id FROM picked
          WHERE (SELECT t.pause_until > {{now}} FROM {{schema}}.tubes t WHERE t.name = $2::text) IS NOT TRUE
          ORDER BY seq, due, id LIMIT 64)
