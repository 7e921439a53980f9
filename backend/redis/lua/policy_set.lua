-- policy_set: set (replace whole) the policy keyed by a pattern, a tube name or a glob, and file
-- every existing tube under the policy that now governs it (see repolicy in lib.lua).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = pattern, ARGV[4] = the policy (see parse_pol in lib.lua)
-- returns 1
redis.call('HSET', B .. ':policies', ARGV[3], ARGV[4])
repolicy_all(ARGV[3])
return 1
