-- kick_job: move one buried or delayed job to ready; kicks += 1.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = id (padded)
-- returns 1, or 0 if missing or in another state
local m = ARGV[3]
local f = fresh(m)
if not f or (f[2] ~= 'buried' and f[2] ~= 'delayed') then return 0 end
unlink(f[1], m, f[2])
to_ready(f[1], m, redis.call('HGET', kjob(m), 'p'))
local P = tpol(f[1])
if P and P.u and f[2] == 'buried' then uq_add(f[1], m) end
history(P, m, 'kicked')
redis.call('HINCRBY', kjob(m), 'nkick', '1')
notify(f[1])
return 1
