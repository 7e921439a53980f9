-- ready_ages: for each tube, how long the job a reserve would take next from it (what
-- peek_state ready returns, after the tube's due transitions) has been ready.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3..] = tubes
-- returns an array with, per tube in order, the milliseconds its next job has been ready, or -1
--         when the tube does not exist, has no ready job, or its job's ready time is unknown
--         (made ready by an older gateway)
local out = {}
for i = 3, #ARGV do
  local t, age = ARGV[i], -1
  if tube_exists(t) then
    tick(t)
    local m = redis.call('ZRANGE', kready(t), 0, 0)[1]
    if m then
      local r = redis.call('HGET', kjob(m), 'r')
      if r then age = math.max(0, NOW - tonumber(r)) end
    end
  end
  out[#out + 1] = age
end
return out
