-- reap_sessions: end, in this bucket, every session of a process the home slot's reaper found
-- dead (reap_dead), as reap ends them. Idempotent.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = process
-- returns the number of sessions ended
local proc = ARGV[3]
local n = 0
for _, s in ipairs(redis.call('SMEMBERS', kproc(proc))) do
  end_session(s, proc)
  n = n + 1
end
redis.call('DEL', kproc(proc))
redis.call('SREM', B .. ':procs', proc)
return n
