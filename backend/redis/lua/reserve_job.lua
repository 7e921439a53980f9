-- reserve_job: reserve job id for the session if it is ready, delayed or buried (any tube,
-- paused or not).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = id (padded)
-- returns {id, tube, priority, body, -1 (a job reserved by id reports no time ready)}, or nil if
-- the job is missing or reserved
local s, m = ARGV[3], ARGV[4]
local f = fresh(m)
if not f or f[2] == 'reserved' then return false end
unlink(f[1], m, f[2])
local P = tpol(f[1])
if P then left(f[1], m, f[2], P) end
return reserve_for(f[1], m, s)
