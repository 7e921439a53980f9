-- pause_tube: pauses existing tube $2 for $3 µs from now. Announces the tube when that unpauses it
-- ($3 = 0) or ends its pause sooner than before, so that waiting reserves, which time their next
-- try by the pause's end, are served.
-- $1 now (NULL: database clock), $2 tube, $3 pause (µs).
-- Returns (the tube, whether it was announced), or no row.
WITH previous AS (
    SELECT pause_until FROM {{schema}}.tubes WHERE name = $2::text -- the statement's snapshot
), paused AS (
    UPDATE {{schema}}.tubes
    SET pause_us = $3::bigint, cmd_pause = cmd_pause + 1,
        pause_until = CASE WHEN $3::bigint > 0 THEN {{now}} + $3::bigint * interval '1 microsecond' END
    WHERE name = $2::text
      AND (name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0)
    RETURNING name, pause_until
), announced AS (
    SELECT name FROM paused p
    WHERE p.pause_until IS NULL OR p.pause_until < (SELECT p0.pause_until FROM previous p0)
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' 0 ' || name) FROM announced
)
SELECT name, EXISTS (SELECT 1 FROM announced) FROM paused WHERE (SELECT count(*) FROM notified) >= 0
