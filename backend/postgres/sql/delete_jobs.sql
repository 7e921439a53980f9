-- delete_jobs: deletes the first $4 jobs of tube $2 in state $3 (1 ready, 2 delayed, 4 buried) in
-- that state's order, each counted in the tube's cmd-delete as delete does; one index range
-- (jobs_ready, jobs_delayed_tube, jobs_buried), so a flush of a large tube is many short
-- statements. Delayed: those whose time has not come (the others are ready; the caller promotes a
-- bounded batch of them before a flush of ready jobs). Rows locked elsewhere are skipped.
-- $1 now (NULL: database clock), $2 tube, $3 state, $4 limit.
-- Returns how many were deleted and whether the tube is left without references (the caller
-- garbage-collects it).
WITH picked AS (
    SELECT * FROM (
        SELECT id FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 1 AND $3::int = 1
        ORDER BY priority, id LIMIT $4::bigint FOR UPDATE SKIP LOCKED) r
    UNION ALL
    SELECT * FROM (
        SELECT id FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 2 AND due_at > {{now}} AND $3::int = 2
        ORDER BY due_at, id LIMIT $4::bigint FOR UPDATE SKIP LOCKED) d
    UNION ALL
    SELECT * FROM (
        SELECT id FROM {{schema}}.jobs
        WHERE tube = $2::text AND state = 4 AND $3::int = 4
        ORDER BY buried_seq LIMIT $4::bigint FOR UPDATE SKIP LOCKED) b
), deleted AS (
    DELETE FROM {{schema}}.jobs WHERE id = ANY(ARRAY(SELECT id FROM picked)) -- an index condition
    RETURNING id
), counted AS (
    UPDATE {{schema}}.tubes t
    SET jobs_count = t.jobs_count - (SELECT count(*) FROM deleted),
        cmd_delete = t.cmd_delete + (SELECT count(*) FROM deleted)
    WHERE t.name = $2::text AND EXISTS (SELECT 1 FROM deleted)
    RETURNING t.jobs_count = 0 AND t.using_count = 0 AND t.watching_count = 0 AS unreferenced
)
SELECT (SELECT count(*) FROM deleted), coalesce((SELECT unreferenced FROM counted), false)
