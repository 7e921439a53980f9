-- dead_sessions: locks the rows of processes $1 (those the caller has confirmed dead) whose lease
-- is still expired, skipping rows another gateway is reaping, and returns each locked process
-- with its sessions (a NULL session for a process that has none, so that it is forgotten too).
SELECT p.process, s.id FROM (
    SELECT process FROM {{schema}}.processes
    WHERE process = ANY($1::text[]) AND lease_until < now()
    FOR UPDATE SKIP LOCKED
) p LEFT JOIN {{schema}}.sessions s ON s.process = p.process
