-- policy_clear: remove the policy keyed by a pattern; the tubes it governed fall to the next most
-- specific one, or to none (see repolicy in lib.lua).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = pattern
-- returns 1, or nil if there is no such policy
if redis.call('HDEL', B .. ':policies', ARGV[3]) == 0 then return false end
repolicy_all(ARGV[3])
return 1
