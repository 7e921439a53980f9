-- promote: applies the transitions that time alone causes, so that the statement after it in the
-- same transaction sees them: delayed jobs whose time has come become ready; reservations whose
-- TTR has passed return to ready, counting a timeout on the job and in the store.
-- Rows another transaction holds are waited for, not skipped (a reserve promoting them commits in
-- moments), and locked in id order like every statement that waits for job rows (see
-- promote_tubes.sql): skipping them showed a due job as still delayed, or reserved, to the
-- statement after this one.
-- $1 now (NULL: the database clock).
WITH picked AS (
    (SELECT id FROM {{schema}}.jobs
     WHERE state = 2 AND due_at <= {{now}}
     ORDER BY due_at LIMIT 10000)
    UNION ALL
    (SELECT id FROM {{schema}}.jobs
     WHERE state = 3 AND due_at <= {{now}}
     ORDER BY due_at LIMIT 10000)
), locked AS (
    -- Re-checked after a wait: a row promoted or reserved meanwhile drops out.
    SELECT j.id, j.state FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state IN (2, 3) AND j.due_at <= {{now}}
    ORDER BY j.id
    FOR UPDATE
), readied AS (
    UPDATE {{schema}}.jobs j
    SET state = 1, due_at = NULL, reserved_by = NULL, reserved_at = NULL,
        timeouts = j.timeouts + (j.state = 3)::int
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
    RETURNING j.id
), counted AS (
    INSERT INTO {{schema}}.job_timeout_counts (n)
    SELECT count(*) FROM locked WHERE state = 3 HAVING count(*) > 0
)
SELECT count(*) FROM readied
