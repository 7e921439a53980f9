-- durable_point: the cheapest commit that waits for the WAL flush (synchronous_commit on, and a
-- synchronous standby when there is one), which makes durable every reserve and touch committed
-- before it (see durability.go). A commit flushes only when its transaction wrote WAL under a
-- transaction id; a read, or txid_current() alone, does not. A zero row here adds nothing to
-- job-timeouts, locks no row another statement takes, and is folded away with the others
-- (fold_timeouts.sql).
INSERT INTO {{schema}}.job_timeout_counts (n) VALUES (0)
