-- bury: moves job $3, reserved by session $2 and not yet past its TTR, to the end of its tube's
-- buried list with priority $4.
-- With policies, a tube under max-reserved is announced (n 0: its waiters look again), so that
-- another gateway's waiting reserve takes the freed slot.
-- With policies, the bury is marked as the worker's (beangate.bury, for jobs_history: see 013).
-- $1 now (NULL: database clock), $2 session, $3 id, $4 priority.
-- The conditions beside the id are wrapped in (...) IS TRUE, which no index can serve, so that the
-- job is found by its primary key: a generic plan made on a small table would otherwise scan a
-- partial index of all reservations (jobs_reserved_by, jobs_reserved_tube).
/*P*/WITH buried AS (
/*-P*/UPDATE {{schema}}.jobs
SET priority = $4::bigint, buries = buries + 1, reserved_by = NULL, state = 4, due_at = NULL,
    buried_seq = nextval('{{schema}}.buried_seq')
WHERE id = $3::bigint AND (state = 3 AND reserved_by = $2::text AND due_at > {{now}}) IS TRUE
/*P*/  AND (SELECT set_config('beangate.bury', $3::bigint::text, true)) IS NOT NULL
/*-P*/RETURNING tube/*P*/
), freed AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 0 ' || b.tube) FROM buried b
    WHERE coalesce((SELECT p.max_reserved > 0 FROM {{schema}}.tube_policy(b.tube) p), false)
)
SELECT tube FROM buried WHERE (SELECT count(*) FROM freed) >= 0/*-P*/
