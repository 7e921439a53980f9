-- pause: stop reserves from taking jobs from tube for d ms; d == 0 unpauses at once
-- (notifying the tube), and so does a pause that ends sooner than the one it replaces. The tube's pause counter += 1 either way.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = d ms
-- returns 1, or 0 if the tube does not exist
local t, d = ARGV[3], tonumber(ARGV[4])
if not tube_exists(t) then return 0 end
tick(t)
if d > 0 then
  local ends = trec(t).pu -- the pause this one replaces, if any
  redis.call('HSET', ktube(t), 'pd', ARGV[4])
  tset(t, 'pu', ds(NOW + d))
  -- Waiting reserves were told when that pause ends; if this one ends sooner, tell them.
  if ends and tonumber(ends) > NOW + d then notify(t) end
else
  redis.call('HDEL', ktube(t), 'pd')
  tset(t, 'pu', false)
  notify(t)
end
tadd(t, 'pauses', 1)
return 1
