-- delete: remove a job that is ready, delayed, buried, or reserved by the session.
-- ARGV[3] = session, ARGV[4] = id (padded)
-- returns 1, or 0 if missing or reserved by another session
local s, m = ARGV[3], ARGV[4]
local t = job_tube(m)
if not t then return 0 end
local f = redis.call('HMGET', kjob(m), 's', 'o')
if f[1] == 'reserved' and f[2] ~= s then return 0 end
unlink(t, m, f[1])
redis.call('DEL', kjob(m))
redis.call('HINCRBY', ktube(t), 'deletes', 1)
gc(t)
return 1
