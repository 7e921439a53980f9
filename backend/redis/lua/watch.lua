-- watch: add tube to the session's watch list (no-op if there), creating the tube if needed.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = tube
-- returns 1
local s, t = ARGV[3], ARGV[4]
ensure_tube(t)
if redis.call('SADD', kwatch(s), t) == 1 then
  redis.call('HINCRBY', ktube(t), 'watching', 1)
end
return 1
