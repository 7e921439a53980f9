-- promote: applies the transitions that time alone causes, so that the statement after it in the
-- same transaction sees them: delayed jobs whose time has come become ready; reservations whose
-- TTR has passed return to ready, counting a timeout on the job and in the store.
-- SKIP LOCKED: a row another transaction holds is being changed by it anyway.
-- $1 now (NULL: the database clock).
WITH due AS (
    SELECT id FROM {{schema}}.jobs
    WHERE state = 2 AND due_at <= {{now}}
    ORDER BY due_at LIMIT 10000
    FOR UPDATE SKIP LOCKED
), expired AS (
    SELECT id FROM {{schema}}.jobs
    WHERE state = 3 AND due_at <= {{now}}
    ORDER BY due_at LIMIT 10000
    FOR UPDATE SKIP LOCKED
), readied AS (
    UPDATE {{schema}}.jobs SET state = 1, due_at = NULL
    WHERE id = ANY(ARRAY(SELECT id FROM due)) -- an index condition, not a semi join
    RETURNING id
), timed_out AS (
    UPDATE {{schema}}.jobs SET state = 1, due_at = NULL, reserved_by = NULL, timeouts = timeouts + 1
    WHERE id = ANY(ARRAY(SELECT id FROM expired))
    RETURNING id
), counted AS (
    UPDATE {{schema}}.counters SET job_timeouts = job_timeouts + (SELECT count(*) FROM timed_out)
    WHERE id = 1 AND EXISTS (SELECT 1 FROM timed_out)
)
SELECT (SELECT count(*) FROM readied) + (SELECT count(*) FROM timed_out)
