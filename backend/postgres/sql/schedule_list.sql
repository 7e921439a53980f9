-- schedule_list: every schedule, by name.
SELECT name, tube, body, priority, ttr_us, delay_us, cron, timezone, every_us, last_tick, last_job, last_run
FROM {{schema}}.schedules ORDER BY name COLLATE "C"
