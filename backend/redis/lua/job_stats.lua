-- job_stats: describe a job (after its tube's due transitions).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = id (padded)
-- returns {id, tube, state, priority, age ms, delay ms, ttr ms, time-left ms,
--          reserves, timeouts, releases, buries, kicks}, or nil if missing
local m = ARGV[3]
local j = fresh(m)
if not j then return false end
local t = j[1]
local f = redis.call('HMGET', kjob(m), 's', 'p', 'c', 'd', 'ttr', 'a',
  'nres', 'ntim', 'nrel', 'nbur', 'nkick')
local left = 0
if f[1] == 'reserved' or f[1] == 'delayed' then left = tonumber(f[6]) - NOW end
return {m, t, f[1], f[2], NOW - tonumber(f[3]), tonumber(f[4]), tonumber(f[5]), left,
  tonumber(f[7] or 0), tonumber(f[8] or 0), tonumber(f[9] or 0), tonumber(f[10] or 0),
  tonumber(f[11] or 0)}
