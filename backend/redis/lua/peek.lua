-- peek: return a job in whatever state (as of now).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = id (padded)
-- returns {id, tube, priority, body}, or nil if missing
local m = ARGV[3]
local f = fresh(m)
if not f then return false end
local j = redis.call('HMGET', kjob(m), 'p', 'b')
return {m, f[1], j[1], j[2]}
