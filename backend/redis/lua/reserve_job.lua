-- reserve_job: reserve job id for the session if it is ready, delayed or buried (any tube,
-- paused or not).
-- ARGV[3] = session, ARGV[4] = process, ARGV[5] = id (padded), ARGV[6] = lease TTL ms
-- returns {id, tube, priority, body}, or nil if the job is missing or reserved
local s, proc, m = ARGV[3], ARGV[4], ARGV[5]
local t = job_tube(m)
if not t then return false end
local st = redis.call('HGET', kjob(m), 's')
if st == 'reserved' then return false end
redis.call('SET', klease(proc), 1, 'PX', ARGV[6])
unlink(t, m, st)
return reserve_for(t, m, s, proc)
