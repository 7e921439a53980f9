-- job_stats: describe a job (after its tube's due transitions).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = id (padded)
-- returns describe's figures (see lib.lua), or nil if missing
local m = ARGV[3]
local j = fresh(m)
if not j then return false end
return describe(m, j[1])
