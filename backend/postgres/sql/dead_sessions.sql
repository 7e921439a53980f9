-- dead_sessions: the sessions of gateway processes whose lease has run out, locking those
-- process rows so that only one gateway ends them.
SELECT s.id FROM {{schema}}.sessions s
WHERE s.process IN (
    SELECT process FROM {{schema}}.processes WHERE lease_until < now() FOR UPDATE SKIP LOCKED)
