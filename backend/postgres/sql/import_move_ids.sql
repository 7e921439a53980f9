-- import_move_ids: moves the job id sequence past $1, the highest id an import keeps, unless it
-- is past it already. setval is not transactional: puts arriving meanwhile get ids above it at once.
SELECT setval('{{schema}}.job_ids', $1::bigint)
FROM {{schema}}.job_ids
WHERE $1::bigint > CASE WHEN is_called THEN last_value ELSE last_value - 1 END
