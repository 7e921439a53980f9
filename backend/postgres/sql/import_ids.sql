-- import_ids: $1 fresh job ids, for imported jobs whose own id is taken.
SELECT nextval('{{schema}}.job_ids') FROM generate_series(1, $1::int)
