-- watch: add tube to the session's watch list (no-op if there), creating the tube if needed. A
-- session the store forgot (see known in lib.lua) is registered again.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = tube
-- returns 1
local s, t = ARGV[3], ARGV[4]
known(s)
watches(s, t)
return 1
