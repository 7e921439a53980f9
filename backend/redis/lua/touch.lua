-- touch: reset the deadline of a job reserved by the session to now + its TTR.
-- ARGV[3] = session, ARGV[4] = id (padded)
-- returns 1, or 0 unless the job is reserved by the session
local s, m = ARGV[3], ARGV[4]
local t = job_tube(m)
if not t then return 0 end
local f = redis.call('HMGET', kjob(m), 's', 'o', 'ttr')
if f[1] ~= 'reserved' or f[2] ~= s then return 0 end
local deadline = ds(NOW + tonumber(f[3]))
redis.call('ZADD', kreserved(t), deadline, m)
redis.call('ZADD', ksres(s), deadline, m)
redis.call('HSET', kjob(m), 'a', deadline)
return 1
