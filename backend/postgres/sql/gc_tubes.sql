-- gc_tubes: deletes tubes $1 (NULL: any tube) left with no job, user or watcher; their counters
-- and pause go with them (the function of 002_tube_list_order).
SELECT {{schema}}.gc_tubes($1::text[])
