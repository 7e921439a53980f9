-- list_tubes: every existing tube, in list order (beanstalkd's: see 002_tube_list_order).
SELECT name FROM {{schema}}.tubes
WHERE name = 'default' OR jobs_count > 0 OR using_count > 0 OR watching_count > 0
ORDER BY list_pos
