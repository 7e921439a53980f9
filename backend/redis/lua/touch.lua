-- touch: reset the deadline of a job reserved by the session to now + its TTR.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = id (padded)
-- returns 1, or 0 unless the job is reserved by the session
local s, m = ARGV[3], ARGV[4]
local t, governed = reserved_by(m, s)
if not t then return 0 end
history(governed and tpol(t), m, 'touched', s)
local deadline = ds(NOW + tonumber(redis.call('HGET', kjob(m), 'ttr')))
redis.call('ZADD', kreserved(t), deadline, m)
due_added(t, deadline)
redis.call('ZADD', ksres(s), deadline, m)
redis.call('HSET', kjob(m), 'a', deadline)
return 1
