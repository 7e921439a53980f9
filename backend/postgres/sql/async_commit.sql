-- async_commit: this transaction's commit does not wait for the disk. Queued first in a batch of
-- reserve attempts alone: a reservation is not worth a WAL flush (beanstalkd does not log it
-- either; after a crash the job is simply ready again).
SELECT set_config('synchronous_commit', 'off', true)
