-- schedule_claim: the first step of firing a tick (FireSchedule), in the transaction that puts
-- the tick's job (put.sql) and records it (schedule_ran.sql): the tick $2 becomes the last of
-- schedule $1 if it is later than its last. The row stays locked until the commit, so a
-- gateway claiming the same tick meanwhile waits, then finds it taken; a transaction that does
-- not commit claims nothing. The schedule row is locked before any tube row (put.sql's), and no
-- other statement locks it.
-- Returns one row: whether the schedule exists, then, when the tick was claimed, what to put.
WITH claimed AS (
    UPDATE {{schema}}.schedules SET last_tick = $2::timestamptz
    WHERE name = $1::text AND last_tick < $2::timestamptz
    RETURNING tube, body, priority, delay_us, ttr_us
)
SELECT EXISTS (SELECT 1 FROM {{schema}}.schedules WHERE name = $1::text), c.tube, c.body, c.priority,
    c.delay_us, c.ttr_us
FROM (SELECT 1) AS one LEFT JOIN claimed c ON true
