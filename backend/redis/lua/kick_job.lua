-- kick_job: move one buried or delayed job to ready; kicks += 1.
-- ARGV[3] = id (padded)
-- returns 1, or 0 if missing or in another state
local m = ARGV[3]
local t = job_tube(m)
if not t then return 0 end
local f = redis.call('HMGET', kjob(m), 's', 'p')
if f[1] ~= 'buried' and f[1] ~= 'delayed' then return 0 end
unlink(t, m, f[1])
to_ready(t, m, f[2])
redis.call('HINCRBY', kjob(m), 'nkick', 1)
redis.call('PUBLISH', CHAN, t)
return 1
