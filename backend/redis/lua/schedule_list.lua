-- schedule_list: every schedule (see schedule_set.lua), in no particular order.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV: only the common ones
-- returns {name, tube, body, priority, TTR ms, delay ms, cron, timezone, every ms, last tick ms,
-- last job id or false, last run ms or false, ...}
local out = {}
for _, name in ipairs(redis.call('SMEMBERS', B .. ':sc')) do
  local f = redis.call('HMGET', B .. ':sc:' .. name, 't', 'b', 'p', 'ttr', 'd', 'cron', 'tz', 'ev', 'l', 'j', 'r')
  if f[1] then
    out[#out + 1] = name
    for i = 1, 11 do out[#out + 1] = f[i] end
  end
end
return out
