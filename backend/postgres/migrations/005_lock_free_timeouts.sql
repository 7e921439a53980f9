-- 005_lock_free_timeouts: TTR expiries are counted without touching the counters row, and a
-- reservation remembers when it was made.
--
-- job_timeout_counts: every statement that times reservations out appends how many it did (an
-- insert takes no lock another statement waits for); stats adds them to counters.job_timeouts, and
-- the maintenance loop folds them in. Before, reserve and promote updated the counters row while
-- holding the row locks of the jobs they promoted, and a write batch holds that row (its puts)
-- while it waits for a job's row lock (its deletes): a deadlock, resolved only after
-- deadlock_timeout (1 s), which made a reserve late and its "now" a second stale.
CREATE TABLE {{schema}}.job_timeout_counts (
    n bigint NOT NULL
);

-- reserved_at: when the current reservation was made. A closing session returns its jobs in the
-- order it reserved them (each to a waiting reserve first), as beanstalkd does; touch moves the
-- deadline, not this.
ALTER TABLE {{schema}}.jobs ADD COLUMN reserved_at timestamptz;
