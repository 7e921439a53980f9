-- dead_sessions: the sessions of gateway processes whose lease has run out, locking those
-- process rows so that only one gateway ends them. $1: the processes the caller heartbeats
-- itself, never dead to it however late their renewal.
SELECT s.id FROM {{schema}}.sessions s
WHERE s.process IN (
    SELECT process FROM {{schema}}.processes
    WHERE lease_until < now() AND process <> ALL($1::text[])
    FOR UPDATE SKIP LOCKED)
