-- reap: end every session of every gateway process whose heartbeat lease has expired (the
-- process died without ending its sessions). Idempotent; any gateway may run it.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV: only the common ones
-- returns the number of sessions ended
local n = 0
for _, proc in ipairs(redis.call('SMEMBERS', B .. ':procs')) do
  if redis.call('EXISTS', klease(proc)) == 0 then
    for _, s in ipairs(redis.call('SMEMBERS', kproc(proc))) do
      end_session(s, proc)
      n = n + 1
    end
    redis.call('DEL', kproc(proc))
    redis.call('SREM', B .. ':procs', proc)
  end
end
return n
