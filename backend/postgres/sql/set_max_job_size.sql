-- set_max_job_size: a gateway starting records its -z ($1), the body limit of SQL puts
-- (migration 014). Written only when it differs, so that gateways starting together with the
-- same -z do not queue on the row.
UPDATE {{schema}}.settings SET value = $1 WHERE name = 'max_job_size' AND value <> $1
