-- schedule_set: creates or replaces the schedule named $2. A replaced schedule keeps its last
-- tick when its timing (cron, timezone, every) is the same, so that gateways setting their
-- config's schedules at each start neither repeat nor lose a tick; a new one, or a new timing,
-- starts from now.
-- $1 now, $2 name, $3 tube, $4 body, $5 priority, $6 TTR (µs), $7 delay (µs), $8 cron, $9 timezone,
-- $10 every (µs).
INSERT INTO {{schema}}.schedules AS s (name, tube, body, priority, ttr_us, delay_us, cron, timezone,
    every_us, last_tick)
VALUES ($2::text, $3::text, $4::bytea, $5::bigint, $6::bigint, $7::bigint, $8::text, $9::text,
    $10::bigint, {{now}})
ON CONFLICT (name) DO UPDATE SET tube = excluded.tube, body = excluded.body,
    priority = excluded.priority, ttr_us = excluded.ttr_us, delay_us = excluded.delay_us,
    cron = excluded.cron, timezone = excluded.timezone, every_us = excluded.every_us,
    last_tick = CASE WHEN (s.cron, s.timezone, s.every_us) = (excluded.cron, excluded.timezone, excluded.every_us)
                     THEN s.last_tick ELSE excluded.last_tick END
