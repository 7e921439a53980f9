-- job_history: a job's history (see history in lib.lua), after its tube's due transitions, so
-- that a TTR run out is in it.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = id (padded)
-- returns {event...}, oldest first, or nil if the job is missing
local m = ARGV[3]
if not fresh(m) then return false end
return redis.call('LRANGE', khist(m), '0', '-1')
