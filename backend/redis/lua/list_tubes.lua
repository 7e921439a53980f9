-- list_tubes: every existing tube, in beanstalkd's order (see ensure_tube in lib.lua).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV: only the common ones
-- returns an array of tube names
return redis.call('ZRANGE', TUBES, 0, -1)
