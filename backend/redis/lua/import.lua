-- import: store jobs from another store with their identity (backend.Admin.Import), each with its
-- key record in B:imported (key -> id), which outlives the job: a key seen before is skipped.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = floor (see raise_ids)
-- ARGV[4] = in the spread layout the bucket (ARGV[1] is its base), else '': a fresh id is then
--           spread_id's, and a kept id that names this bucket raises its sequence past it (an
--           id naming another bucket was reserved there first, by forward)
-- ARGV[5..] = per job, 15 fields: key, id (0: a fresh one), tube, state (ready, delayed,
--             buried; anything else is ready), priority, TTR ms, delay ms, time left ms (delayed),
--             age ms, reserves, timeouts, releases, buries, kicks, body
-- returns {id, outcome, ...} per job: outcome 1 id kept, 2 id changed, 3 already imported
local KIMP, IDS = B .. ':imported', B .. ':ids'
local floor, bucket = tonumber(ARGV[3]), tonumber(ARGV[4])
if not bucket then raise_ids(floor) end
-- Per call rather than per job: the id sequence's value, each tube's existence and count.
local top = tonumber(redis.call('GET', IDS) or 0)
local out, woken, added, total = {}, {}, {}, 0
for i = 5, #ARGV, 15 do
  local key, id, t, st = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local seen = redis.call('HGET', KIMP, key)
  if seen then
    out[#out + 1] = tonumber(seen)
    out[#out + 1] = 3
  else
    local outcome = 1
    local m = string.format('%020d', id)
    -- In the spread layout an id this bucket forwards elsewhere is another job's.
    if id == 0 or redis.call('EXISTS', kjob(m)) == 1 or (bucket and redis.call('EXISTS', B .. ':x:' .. m) == 1) then
      if bucket then
        id = spread_id(bucket, floor)
      else
        top = top + 1
        id = top
      end
      outcome = 2
    elseif bucket then
      if id % SPREAD_BUCKETS == bucket then raise_seq(id) end
    elseif id > top then
      top = id
    end
    m = string.format('%020d', id)
    local pri, left = ARGV[i + 4], tonumber(ARGV[i + 7])
    if not added[t] then
      ensure_tube(t)
      added[t] = 0
    end
    added[t] = added[t] + 1
    total = total + 1
    local due = 0
    if st == 'delayed' and left > 0 then
      due = NOW + left
    elseif st ~= 'buried' then
      st = 'ready'
    end
    local jk = kjob(m)
    redis.call('HSET', jk, 'b', ARGV[i + 14], 't', t, 'p', pri, 'ttr', ARGV[i + 5], 'd', ARGV[i + 6],
      'c', ds(NOW - tonumber(ARGV[i + 8])), 's', st, 'a', ds(due))
    -- Counters stay absent when 0, as after a put.
    local names = {'nres', 'ntim', 'nrel', 'nbur', 'nkick'}
    for k = 1, 5 do
      local v = ARGV[i + 8 + k]
      if v ~= '0' then redis.call('HSET', jk, names[k], v) end
    end
    if st == 'delayed' then
      to_delayed(t, m, due)
    elseif st == 'buried' then
      redis.call('ZADD', kburied(t), redis.call('HINCRBY', STATS, 'buryseq', '1'), m)
    else
      redis.call('ZADD', kready(t), pri, m)
      woken[t] = true
    end
    local P = tpol(t)
    if P then
      redis.call('HSET', jk, 'g', '1')
      entered(t, m, st, P)
    end
    redis.call('HSET', KIMP, key, ds(id))
    out[#out + 1] = id
    out[#out + 1] = outcome
  end
end
if not bucket then redis.call('SET', IDS, ds(top)) end
for t, n in pairs(added) do tadd(t, 'total', n) end
if total > 0 then sadd('total', total) end
for t in pairs(woken) do notify(t) end
return out
