-- release: return a job reserved by the session to ready (delay 0, notifying its tube) or
-- delayed (see to_delayed), with a new priority; releases += 1. Under retry-delay, delay 0
-- delays it by its backoff (come_back).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = id (padded), ARGV[5] = priority, ARGV[6] = delay ms
-- returns 1, or 0 unless the job is reserved by the session, or 2 if a policy buried it
-- instead (max-reserves, or expire-after with bury past its time; past its time with delete,
-- the job is gone and the answer is 1)
local s, m, pri, delay = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local t = reserved_by(m, s)
if not t then return 0 end
unlink(t, m, 'reserved', s)
redis.call('HINCRBY', kjob(m), 'nrel', '1')
local P = tpol(t)
history(P, m, 'released', s, ARGV[6])
if P and (P.mr > 0 or P.ea > 0 or P.rd > 0) then
  redis.call('HSET', kjob(m), 'p', pri, 'd', ARGV[6])
  local took = come_back(t, m, P, delay, NOW)
  if took == 'buried' then return 2 end
  if took then return 1 end
end
if delay > 0 then
  local due = ds(NOW + delay)
  redis.call('HSET', kjob(m), 'p', pri, 'd', ARGV[6], 'o', '', 's', 'delayed', 'a', due)
  to_delayed(t, m, due)
  came_back(t, m, 'delayed', P)
else
  redis.call('HSET', kjob(m), 'p', pri, 'd', ARGV[6])
  to_ready(t, m, pri) -- clears the owner
  if P then entered(t, m, 'ready', P) end
  notify(t)
end
return 1
