-- forward: reserve an imported id in the bucket it names (id mod SPREAD_BUCKETS) for a job kept
-- in another bucket, its tube's, with a forwarding entry B:x:<id> -> that bucket, by which the
-- commands that name the id find the job (spread layout, docs/redis-cluster.md). The bucket's
-- sequence is raised past the id, so that it never gives the id to a job of its own.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = id (padded), ARGV[4] = the bucket that keeps the job
-- returns 1 when the id is the job's (entry written, or already there for that bucket), 0 when
-- it is taken here (a job of this bucket, or an entry to another bucket): the import gives the
-- job a fresh id
local m, to = ARGV[3], ARGV[4]
if redis.call('EXISTS', kjob(m)) == 1 then return 0 end
local kx = B .. ':x:' .. m
local cur = redis.call('GET', kx)
if cur and cur ~= to then return 0 end
if not cur then redis.call('SET', kx, to) end
raise_seq(tonumber(m))
return 1
