-- list_tubes: every existing tube, in list order (beanstalkd's: a removed tube's place goes to the
-- last tube; see 009_gc_tubes_without_waits).
SELECT t.name FROM {{schema}}.tubes t LEFT JOIN {{schema}}.tube_positions p ON p.name = t.name
WHERE t.name = 'default' OR t.jobs_count > 0 OR t.using_count > 0 OR t.watching_count > 0
ORDER BY coalesce(p.list_pos, t.list_pos)
