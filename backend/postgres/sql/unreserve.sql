-- unreserve: undoes the reservation of job $2 by session $1 made for a reserve whose caller had
-- already given up (cancelled, timed out) when its batch committed: the job is ready again, as
-- if never reserved (ready since when it was before), and its tube is announced. A timeout counted on the way stays counted: the
-- earlier reservation did run out.
-- The conditions beside the id are wrapped in (...) IS TRUE, which no index can serve, so that the
-- job is found by its primary key: a generic plan made on a small table would otherwise scan a
-- partial index of all reservations (jobs_reserved_by, jobs_reserved_tube).
WITH undone AS (
    UPDATE {{schema}}.jobs
    SET state = 1, reserved_by = NULL, due_at = NULL, reserves = reserves - 1
    WHERE id = $2::bigint AND (state = 3 AND reserved_by = $1::text) IS TRUE
    RETURNING tube
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 1 ' || tube) FROM undone
)
SELECT tube FROM undone
WHERE (SELECT count(*) FROM notified) >= 0
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
