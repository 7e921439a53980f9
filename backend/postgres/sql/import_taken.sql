-- import_taken: which of the ids $1 belong to a job already there.
SELECT id FROM {{schema}}.jobs WHERE id = ANY($1::bigint[])
