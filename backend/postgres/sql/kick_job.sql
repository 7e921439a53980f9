-- kick_job: moves job $1 to ready if it is buried or delayed; announces its tube.
-- $1 id. Returns the tube, or no row.
WITH kicked AS (
    UPDATE {{schema}}.jobs SET state = 1, due_at = NULL, buried_seq = NULL, kicks = kicks + 1
    WHERE id = $1::bigint AND state IN (2, 4)
    RETURNING tube
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 1 ' || tube) FROM kicked
)
SELECT tube FROM kicked WHERE (SELECT count(*) FROM notified) >= 0
