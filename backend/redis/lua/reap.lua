-- reap: end every session of every gateway process whose heartbeat lease has stayed missing for
-- a grace period (the process died without ending its sessions). The first run that finds a
-- lease missing only suspects its process: after a Redis outage longer than the lease every
-- lease has expired, live gateways' too, and each needs one heartbeat to renew its own.
-- Idempotent; any gateway may run it.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = grace ms: how long after a run first found a lease missing a later run may reap
--           its process, if the lease is still missing (longer than the heartbeat period)
-- ARGV[4] = suspicion TTL ms: a suspicion that no run has found again for this long lapses, so
--           a gap in the runs (Redis down meanwhile, expiry times being absolute) starts the
--           grace over
-- returns the number of sessions ended
-- Times are the Redis server's TIME even when ARGV[2] is a clock's: leases expire by it.
local grace, ttl = tonumber(ARGV[3]), ARGV[4]
local now = math.floor(server_now_us() / 1000)
local n = 0
for _, proc in ipairs(redis.call('SMEMBERS', B .. ':procs')) do
  local sk = ksuspect(proc)
  if redis.call('EXISTS', klease(proc)) == 1 then
    redis.call('DEL', sk) -- renewed: no longer suspect
  else
    local since = redis.call('GET', sk)
    if not since then
      redis.call('SET', sk, ds(now), 'PX', ttl)
    elseif now - tonumber(since) < grace then
      redis.call('PEXPIRE', sk, ttl)
    else
      for _, s in ipairs(redis.call('SMEMBERS', kproc(proc))) do
        end_session(s, proc)
        n = n + 1
      end
      redis.call('DEL', kproc(proc), sk)
      redis.call('SREM', B .. ':procs', proc)
    end
  end
end
return n
