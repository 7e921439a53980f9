-- forget_dead_processes: deletes the process rows $1 (locked by dead_sessions, their sessions
-- ended), and returns the other processes whose lease has expired, except the caller's own ($2):
-- the caller's suspects.
WITH forgotten AS (
    DELETE FROM {{schema}}.processes WHERE process = ANY($1::text[])
)
SELECT process FROM {{schema}}.processes
WHERE lease_until < now() AND process <> ALL(coalesce($1::text[], '{}')) AND process <> ALL($2::text[])
