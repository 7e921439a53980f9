-- 006_ready_at: when a job last became ready, so that a reserve reports how long it waited ready
-- (beangate_job_ready_wait_seconds). Set by every transition to ready: a put without delay, a
-- release without delay, kick, kick-job and a session's end at that moment; a delayed job or an
-- expired reservation at its due_at, which is when it became ready, however much later the row is
-- promoted. NULL for the jobs of an older gateway, which report no time ready. Adding a nullable
-- column without a default rewrites no row.
ALTER TABLE {{schema}}.jobs ADD COLUMN ready_at timestamptz;
