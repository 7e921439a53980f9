-- spread_lib.lua: helpers of the spread layout (docs/redis-cluster.md), loaded right after
-- lib.lua (not an operation by itself). In that layout each operation runs in one bucket, whose
-- base {prefix:b} is its ARGV[1]: the bucket's keys are lib.lua's key layout under that base.

-- SPREAD_BUCKETS and MAX_SPREAD_SEQ: an id is seq × SPREAD_BUCKETS + bucket, below 2^53
-- (spreadid.go).
local SPREAD_BUCKETS = 1024
local MAX_SPREAD_SEQ = 8796093022207 -- (2^53 - 1 - (SPREAD_BUCKETS - 1)) / SPREAD_BUCKETS; a load may not call math

-- spread_id is the id of a new job of bucket: the bucket's next sequence (B:ids counts
-- sequences there), at least the lowest whose id is above floor, the highest id the putting
-- gateway has handed out (minSeq in spreadid.go), so that one gateway's ids increase across
-- buckets. Past MAX_SPREAD_SEQ the namespace's ids are used up: an error, never a wrap.
local function spread_id(bucket, floor)
  local seq = redis.call('INCR', IDS)
  local min = 1
  if floor >= bucket then min = math.floor((floor - bucket) / SPREAD_BUCKETS) + 1 end
  if seq < min then
    seq = min
    redis.call('SET', IDS, ds(seq))
  end
  if seq > MAX_SPREAD_SEQ then error('ERR the namespace\'s job ids are used up') end
  return seq * SPREAD_BUCKETS + bucket
end

-- raise_seq raises this bucket's sequence so that no id it gives is id or below: an id kept by
-- an import (the bucket's own, or one forwarded from here) is never given again.
local function raise_seq(id)
  local seq = math.floor(id / SPREAD_BUCKETS)
  if tonumber(redis.call('GET', IDS) or 0) < seq then redis.call('SET', IDS, ds(seq)) end
end

-- better tells whether ready job m of priority pri (a number) comes before job bm of priority
-- bp in beanstalk's order (priority, then id; ids padded, so compared as strings).
local function better(pri, m, bp, bm)
  return pri < bp or (pri == bp and m < bm)
end
