-- use: make tube the session's used tube, creating it if needed; the previous used tube loses
-- the session's reference (and vanishes if nothing else refers to it). A session the store
-- forgot (see known in lib.lua) is registered again.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = tube
-- returns 1
local s, t = ARGV[3], ARGV[4]
ensure_tube(t)
uses(s, t)
return 1
