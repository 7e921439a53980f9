-- delete_jobs: delete the first jobs of a tube in one state (ready, delayed or buried), in the
-- state's order; each counts in the tube's cmd-delete, as delete does. One ZRANGE of at most
-- limit members: a flush of a large tube is many short calls, never one long one.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = state, ARGV[5] = limit
-- returns how many were deleted
local t, st = ARGV[3], ARGV[4]
if not tube_exists(t) then return 0 end
tick(t)
local k = kstate(t, st, false)
if not k then return 0 end
local ms = redis.call('ZRANGE', k, 0, tonumber(ARGV[5]) - 1)
if #ms == 0 then return 0 end
redis.call('ZREM', k, unpack(ms))
local P = tpol(t)
if P then
  for _, m in ipairs(ms) do left(t, m, st, P) end
end
local keys = {}
-- With their histories: a job moved here from a tube that keeps them has one.
for i, m in ipairs(ms) do keys[2 * i - 1], keys[2 * i] = kjob(m), khist(m) end
redis.call('DEL', unpack(keys))
tadd(t, 'deletes', #ms)
gc(t)
return #ms
