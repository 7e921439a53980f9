-- schedule_ran: records the job the claimed tick of schedule $2 put (see schedule_claim.sql).
-- $1 now, $2 name, $3 the job's id.
UPDATE {{schema}}.schedules SET last_job = $3::bigint, last_run = {{now}} WHERE name = $2::text
