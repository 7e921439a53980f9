-- ignore: remove tube from the session's watch list (no-op if absent); the tube vanishes if
-- nothing refers to it any more.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = tube
-- returns 1
local s, t = ARGV[3], ARGV[4]
if redis.call('SREM', kwatch(s), t) == 1 then
  tadd(t, 'watching', -1)
  gc(t)
end
return 1
