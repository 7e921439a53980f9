-- 012_schedules: periodic jobs (backend.Schedules), one row per schedule, kept here so that
-- every gateway of a fleet sees the same ones and claims each tick in the row (schedule_claim.sql):
-- last_tick is the latest tick claimed, or when the schedule (or its timing) was set; last_job
-- and last_run the job the last claim put and when (NULL until the first). Exactly one of cron
-- ('' when unset) and every_us (0 when unset) is set.
CREATE TABLE {{schema}}.schedules (
    name      text PRIMARY KEY,
    tube      text NOT NULL,
    body      bytea NOT NULL,
    priority  bigint NOT NULL,
    ttr_us    bigint NOT NULL,
    delay_us  bigint NOT NULL,
    cron      text NOT NULL,
    timezone  text NOT NULL,
    every_us  bigint NOT NULL,
    last_tick timestamptz NOT NULL,
    last_job  bigint,
    last_run  timestamptz
);
