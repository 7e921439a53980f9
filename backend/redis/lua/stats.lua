-- stats: the namespace-wide figures (after applying every tube's due transitions).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV: only the common ones
-- returns {urgent, ready, reserved, delayed, buried, total jobs, job timeouts, tubes}
local u, r, res, d, b = 0, 0, 0, 0, 0
local tubes = redis.call('ZRANGE', TUBES, 0, -1)
for _, t in ipairs(tubes) do
  tick(t)
  u = u + redis.call('ZCOUNT', kready(t), '-inf', '(1024')
  r = r + redis.call('ZCARD', kready(t))
  res = res + redis.call('ZCARD', kreserved(t))
  d = d + redis.call('ZCARD', kdelayed(t))
  b = b + redis.call('ZCARD', kburied(t))
end
flush() -- B:stats as of now (see the memo in lib.lua)
local f = redis.call('HMGET', STATS, 'total', 'timeouts')
return {u, r, res, d, b, tonumber(f[1] or 0), tonumber(f[2] or 0), #tubes}
