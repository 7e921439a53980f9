-- kick: move up to bound jobs of tube to ready: buried ones (oldest first) if it has any, else
-- delayed ones (soonest first); kicks += 1 each.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = bound (decimal, up to 2^64-1)
-- returns {how many moved, the first ids moved...}: up to 64 of them, in the order they moved,
-- unless the tube is paused; the gateway hands them to its waiting reserves in that order, as
-- beanstalkd hands kicked jobs out one by one ({0} if the tube does not exist)
local t = ARGV[3]
if not tube_exists(t) then return {0} end
local paused = tick(t)
local bound = tonumber(ARGV[4])
if bound <= 0 then return {0} end
local from = kburied(t)
if redis.call('ZCARD', from) == 0 then from = kdelayed(t) end
local n = redis.call('ZCARD', from)
local stop = -1
if bound < n then stop = bound - 1 end
local ms = redis.call('ZRANGE', from, 0, stop)
local P = tpol(t)
for _, m in ipairs(ms) do
  redis.call('ZREM', from, m)
  to_ready(t, m, redis.call('HGET', kjob(m), 'p'))
  redis.call('HINCRBY', kjob(m), 'nkick', '1')
  if P and P.u and from ~= kdelayed(t) then uq_add(t, m) end
  history(P, m, 'kicked')
end
if #ms > 0 then notify(t) end
local out = {#ms}
if not paused then
  for i = 1, math.min(#ms, 64) do out[#out + 1] = ms[i] end
end
return out
