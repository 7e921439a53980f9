-- pause_tube: pauses existing tube $2 for $3 µs from now ($3 = 0 unpauses and announces the
-- tube so that waiting reserves are served).
-- $1 now (NULL: database clock), $2 tube, $3 pause (µs). Returns the tube, or no row.
WITH paused AS (
    UPDATE {{schema}}.tubes
    SET pause_us = $3::bigint, cmd_pause = cmd_pause + 1,
        pause_until = CASE WHEN $3::bigint > 0 THEN {{now}} + $3::bigint * interval '1 microsecond' END
    WHERE name = $2::text
      AND (name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0)
    RETURNING name, pause_until
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 0 ' || name) FROM paused WHERE pause_until IS NULL
)
SELECT name FROM paused WHERE (SELECT count(*) FROM notified) >= 0
