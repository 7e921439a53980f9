-- list_tubes: every existing tube, in creation order.
SELECT name FROM {{schema}}.tubes
WHERE name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0
ORDER BY created_seq
