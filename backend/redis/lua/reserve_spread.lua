-- reserve_spread: one bucket's part of a reserve whose watch list spans several buckets of the
-- spread layout (docs/redis-cluster.md, spreadreserve.go). As reserve does over the bucket's
-- watched tubes (due transitions, paused tubes and policy-held ones skipped), but it reserves
-- the bucket's best ready job only when asked to claim and the job is no worse than the bound,
-- the best job another bucket showed; else it reports that job, the bucket's head.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = DEADLINE_SOON margin ms, ARGV[5] = wait mode (as reserve's),
-- ARGV[6] = 1 to claim, 0 to report the head only,
-- ARGV[7] = the bound's priority, or '' for no bound, ARGV[8] = the bound's id (padded),
-- ARGV[9..] = the watched tubes of this bucket (none: the session's reservations here only)
-- returns {1, id, tube, priority, body, more, ready for}   reserved (as reserve's)
--         {3, priority, id}                                the bucket's best ready job, not taken
--         {2}, {0, next, now, soon}                        as reserve's, for this bucket
local s, margin, mode, claim = ARGV[3], num(ARGV[4]), num(ARGV[5]), ARGV[6] == '1'
local FIRST = 9
if mode % 2 == 1 then unwait(s) end

local pauses, tokens = {}, nil
local best, bestpri, besti, tops = nil, nil, nil, 0
local woke, ready = {}, {}
for i = FIRST, #ARGV do
  local t = ARGV[i]
  local paused, pu
  paused, pu, woke[i] = tick(t, true)
  pauses[i] = pu
  ready[i] = 0
  if not paused then
    local top = redis.call('ZRANGE', kready(t), '0', '1', 'WITHSCORES')
    local P = top[1] and trec(t).pol and tpol(t)
    if P then
      local held, at = limited(t, P)
      if held then
        act(t, at and 'rate' or 'max-reserved', 'defer')
        tokens = tokens or {}
        top, tokens[i] = {}, at
      end
    end
    ready[i] = #top / 2
    tops = tops + ready[i]
    if top[1] and (not best or better(top[2] + 0, top[1], bestpri + 0, best)) then
      best, bestpri, besti = top[1], top[2], i
    end
  end
end

local take = false
if best and claim then
  take = ARGV[7] == '' or not better(ARGV[7] + 0, ARGV[8], bestpri + 0, best)
end
for i = FIRST, #ARGV do
  if woke[i] and not (take and i == besti and ready[i] == 1) then notify(ARGV[i]) end
end
if take then
  local besttube = ARGV[besti]
  redis.call('ZREM', kready(besttube), best)
  local P = tpol(besttube)
  if P then
    took(besttube, P)
    left(besttube, best, 'ready', P)
  end
  local j = reserve_for(besttube, best, s, true)
  local more = 0
  if tops > 1 then more = 1 end
  return {1, j[1], j[2], j[3], j[4], more, j[5]}
end
if best then return {3, bestpri + 0, best + 0} end

local next, soon = -1, -1
local function consider(v)
  if v then
    v = v + 0
    if next < 0 or v < next then next = v end
  end
end
local first = redis.call('ZRANGE', ksres(s), '0', '0', 'WITHSCORES')
while first[1] and first[2] + 0 <= NOW do
  local t = redis.call('HGET', kjob(first[1]), 't')
  if t then tick(t) end
  redis.call('ZREM', ksres(s), first[1])
  first = redis.call('ZRANGE', ksres(s), '0', '0', 'WITHSCORES')
end
if first[1] then
  soon = first[2] - margin
  if soon <= NOW then return {2} end
end
for i = FIRST, #ARGV do
  local t = ARGV[i]
  consider(redis.call('ZRANGE', kdelayed(t), '0', '0', 'WITHSCORES')[2])
  consider(redis.call('ZRANGE', kreserved(t), '0', '0', 'WITHSCORES')[2])
  consider(pauses[i])
  consider(tokens and tokens[i])
end
if mode >= 2 and #ARGV >= FIRST then
  local tubes = {}
  for i = FIRST, #ARGV do tubes[#tubes + 1] = ARGV[i] end
  wait(s, tubes)
end
return {0, next, NOW_US, soon}
