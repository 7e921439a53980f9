-- unuse: drop the session's used tube in this bucket (spread layout: the session now uses a tube
-- of another bucket); the tube vanishes if nothing else refers to it.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session
-- returns 1
local s = ARGV[3]
local old = redis.call('HGET', ksess(s), 'use')
if old then
  redis.call('HDEL', ksess(s), 'use')
  tadd(old, 'using', -1)
  gc(old)
end
return 1
