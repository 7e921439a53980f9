-- schedule_clear: remove a schedule (see schedule_set.lua).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = name
-- returns 1, or 0 if there is no such schedule
if redis.call('SREM', B .. ':sc', ARGV[3]) == 0 then return 0 end
redis.call('DEL', B .. ':sc:' .. ARGV[3])
return 1
