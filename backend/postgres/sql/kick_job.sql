-- kick_job: moves job $2 to ready if it is buried or delayed (a delayed job whose time has come is
-- ready already); announces its tube.
-- $1 now (NULL: database clock), $2 id. Returns the tube, or no row.
WITH kicked AS (
    UPDATE {{schema}}.jobs SET state = 1, ready_at = {{now}}, due_at = NULL, buried_seq = NULL, kicks = kicks + 1
    WHERE id = $2::bigint AND (state = 4 OR state = 2 AND due_at > {{now}})
    RETURNING tube
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 1 ' || tube) FROM kicked
)
SELECT tube FROM kicked WHERE (SELECT count(*) FROM notified) >= 0
