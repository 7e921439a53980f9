-- session_begin: register a session that uses and watches 'default', and refresh its
-- process's heartbeat lease.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = process, ARGV[5] = lease TTL ms, ARGV[6] = its client's address
-- (for the jobs' histories; absent from an older gateway)
-- returns 1, or 0 if the session already existed (nothing changed)
local s, proc = ARGV[3], ARGV[4]
redis.call('SET', klease(proc), 1, 'PX', ARGV[5])
redis.call('SADD', B .. ':procs', proc)
redis.call('SADD', kproc(proc), s)
if redis.call('EXISTS', ksess(s)) == 1 then return 0 end
ensure_tube('default')
redis.call('HSET', ksess(s), 'use', 'default', 'ad', ARGV[6] or '')
redis.call('SADD', kwatch(s), 'default')
tadd('default', 'using', 1)
tadd('default', 'watching', 1)
return 1
