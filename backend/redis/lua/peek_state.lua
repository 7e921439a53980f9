-- peek_state: return the next job of tube in a state: ready (what a reserve would get, paused
-- or not), delayed (soonest due) or buried (oldest).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = 'ready' | 'delayed' | 'buried'
-- returns {id, tube, priority, body}, or nil if none or the tube does not exist
local t, st = ARGV[3], ARGV[4]
if not tube_exists(t) then return false end
tick(t)
local k
if st == 'ready' then k = kready(t) elseif st == 'delayed' then k = kdelayed(t) else k = kburied(t) end
local m = redis.call('ZRANGE', k, 0, 0)[1]
if not m then return false end
local f = redis.call('HMGET', kjob(m), 'p', 'b')
return {m, t, f[1], f[2]}
