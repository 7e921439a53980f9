-- kick: move up to bound jobs of tube to ready: buried ones (oldest first) if it has any, else
-- delayed ones (soonest first); kicks += 1 each.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = bound (decimal, up to 2^64-1)
-- returns how many moved (0 if the tube does not exist)
local t = ARGV[3]
if not tube_exists(t) then return 0 end
tick(t)
local bound = tonumber(ARGV[4])
if bound <= 0 then return 0 end
local from = kburied(t)
if redis.call('ZCARD', from) == 0 then from = kdelayed(t) end
local n = redis.call('ZCARD', from)
local stop = -1
if bound < n then stop = bound - 1 end
local ms = redis.call('ZRANGE', from, 0, stop)
for _, m in ipairs(ms) do
  redis.call('ZREM', from, m)
  to_ready(t, m, redis.call('HGET', kjob(m), 'p'))
  redis.call('HINCRBY', kjob(m), 'nkick', 1)
end
if #ms > 0 then notify(t) end
return #ms
