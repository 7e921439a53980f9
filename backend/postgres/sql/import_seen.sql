-- import_seen: which of the keys $1 were imported before, and the ids their jobs were given.
SELECT key, job_id FROM {{schema}}.imported WHERE key = ANY($1::text[])
