-- schedule_clear: removes the schedule named $1; a row comes back if there was one.
DELETE FROM {{schema}}.schedules WHERE name = $1::text RETURNING name
