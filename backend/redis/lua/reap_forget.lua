-- reap_forget: drop a dead process's home records once reap_sessions has ended its sessions in
-- every bucket of {prefix}:pb:<process>.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = process
-- returns 1
local proc = ARGV[3]
redis.call('DEL', B .. ':pb:' .. proc, kproc(proc), ksuspect(proc))
redis.call('SREM', B .. ':procs', proc)
return 1
