-- peek: return a job in whatever state (after its tube's due transitions).
-- ARGV[3] = id (padded)
-- returns {id, tube, priority, body}, or nil if missing
local m = ARGV[3]
local t = job_tube(m)
if not t then return false end
local f = redis.call('HMGET', kjob(m), 'p', 'b')
return {m, t, f[1], f[2]}
