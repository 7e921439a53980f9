-- gc_tubes: deletes tubes $1 (NULL: any tube) left with no job, user or watcher; their counters
-- and pause go with them. Safe against a concurrent new reference: DELETE re-checks the counts on
-- the latest row version after waiting for its lock.
DELETE FROM {{schema}}.tubes
WHERE name <> 'default' AND jobs_count = 0 AND using_count = 0 AND watching_count = 0
  AND ($1::text[] IS NULL OR name = ANY($1::text[]))
