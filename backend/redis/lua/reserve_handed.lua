-- reserve_handed: reserve job id for the session if it is ready in one of the session's watched
-- tubes and that tube is not paused: a job a closing session returned, handed by this gateway to
-- the session's waiting reserve (see end_session). Nothing if someone was faster.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = id (padded), ARGV[5..] = the session's watched tubes
-- returns {id, tube, priority, body, ready for (ms; -1: unknown)}, or nil
local s, m = ARGV[3], ARGV[4]
local f = fresh(m)
if not f or f[2] ~= 'ready' then return false end
local watched = false
for i = 5, #ARGV do
  if ARGV[i] == f[1] then watched = true end
end
if not watched or tick(f[1]) then return false end
local P = tpol(f[1])
if P then
  if limited(f[1], P) then return false end
  took(f[1], P)
  left(f[1], m, 'ready', P)
end
unlink(f[1], m, 'ready')
unwait(s)
return reserve_for(f[1], m, s, true)
