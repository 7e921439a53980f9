-- forget_dead_processes: deletes the process rows whose lease has run out.
DELETE FROM {{schema}}.processes WHERE lease_until < now()
