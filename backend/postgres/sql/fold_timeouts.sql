-- fold_timeouts: moves the appended timeout counts into the counters row (maintenance), so that
-- stats sums few rows.
WITH folded AS (
    DELETE FROM {{schema}}.job_timeout_counts RETURNING n
)
UPDATE {{schema}}.counters SET job_timeouts = job_timeouts + (SELECT sum(n) FROM folded)
WHERE id = 1 AND EXISTS (SELECT 1 FROM folded)
