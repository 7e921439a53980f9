-- forget_dead_processes: deletes the process rows whose lease has run out, except the caller's
-- own ($1).
DELETE FROM {{schema}}.processes WHERE lease_until < now() AND process <> ALL($1::text[])
