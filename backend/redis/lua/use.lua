-- use: make tube the session's used tube, creating it if needed; the previous used tube loses
-- the session's reference (and vanishes if nothing else refers to it).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = tube
-- returns 1
local s, t = ARGV[3], ARGV[4]
ensure_tube(t)
local old = redis.call('HGET', ksess(s), 'use')
if old == t then return 1 end
redis.call('HSET', ksess(s), 'use', t)
redis.call('HINCRBY', ktube(t), 'using', 1)
if old then
  redis.call('HINCRBY', ktube(old), 'using', -1)
  gc(old)
end
return 1
