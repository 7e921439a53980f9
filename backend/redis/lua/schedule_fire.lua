-- schedule_fire: claim a tick of a schedule and put its job, in this one call: if the
-- schedule's last tick is before the tick, the tick becomes its last and the job is put as
-- put.lua puts one (policies apply, waiting reserves are notified); else nothing changes. Every
-- gateway asks for each tick it sees due; the first call claims it, the others find it taken.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = name, ARGV[4] = tick ms, ARGV[5] = floor (see put.lua), ARGV[6] = in the spread
-- layout, this bucket (put.lua's ARGV[10])
-- returns the job's id, 0 if the tick was claimed already, -1 if there is no such schedule
local k = B .. ':sc:' .. ARGV[3]
local f = redis.call('HMGET', k, 'l', 't', 'b', 'p', 'ttr', 'd')
if not f[1] then return -1 end
if num(f[1]) >= num(ARGV[4]) then return 0 end
local id = OPS['put'](KEYS, {ARGV[1], ARGV[2], f[2], f[4], f[6], f[5], f[3], ARGV[5], '', ARGV[6]})
redis.call('HSET', k, 'l', ARGV[4], 'j', id, 'r', now_s())
return id
