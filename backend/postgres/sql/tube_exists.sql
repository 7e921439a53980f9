-- tube_exists: whether tube $1 exists.
SELECT EXISTS (SELECT 1 FROM {{schema}}.tubes WHERE name = $1::text)
