-- reserve: reserve for the session the ready job with the lowest (priority, id) over the
-- watched tubes, skipping paused ones and those a max-reserved or rate policy holds back, after
-- applying their due transitions (and expiring the session's own overdue reservations wherever
-- they are).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = DEADLINE_SOON margin ms,
-- ARGV[5] = wait mode: the sum of 1 (an earlier try of this reserve was counted as waiting:
--           uncount it) and 2 (count it as waiting on the watched tubes if nothing is found,
--           so that notify publishes them; see wait in lib.lua, which also restores what a
--           store that lost data forgot of the session),
-- ARGV[6..] = watched tubes: the session's whole watch list
-- returns {1, id, tube, priority, body, more, ready for}
--                                              reserved; more = 1 if a watched tube still has a
--                                              ready job (so another waiter may be woken); ready
--                                              for: ms since the job became ready (-1: unknown)
--         {2}                                  deadline soon: nothing reservable and one of the
--                                              session's reservations is within the margin
--         {0, next, now, soon}                 nothing: next = the earliest time (ms) at which
--                                              the answer may change for every reserve of the
--                                              tubes without a publish (a delayed job due, a
--                                              reservation expiring, a pause ending, a rate
--                                              token accruing), or -1;
--                                              now = the call's time in microseconds;
--                                              soon = when this session's margin starts (ms;
--                                              the answer changes for this reserve only), or -1
local s, margin, mode = ARGV[3], num(ARGV[4]), num(ARGV[5])
local FIRST = 6
if mode % 2 == 1 then unwait(s) end

local pauses -- by ARGV index: when the tube's pause ends, or false
local tokens -- by ARGV index: when a rate policy's next token accrues (ms), if waited for
if #ARGV == FIRST and not trec(ARGV[FIRST]).pol then
  -- One watched tube, the usual case, as the loop below does it without its tables (each costs
  -- Lua an allocation and its collection).
  local t = ARGV[FIRST]
  local paused, pu, woke = tick(t, true)
  local top = false -- its first two ready jobs (no scores: nothing to compare them with)
  if not paused then top = redis.call('ZRANGE', kready(t), '0', '1') end
  if woke and not (top and #top == 1) then notify(t) end
  if top and top[1] then
    redis.call('ZREM', kready(t), top[1])
    local j = reserve_for(t, top[1], s, true)
    local more = 0
    if top[2] then more = 1 end
    return {1, j[1], j[2], j[3], j[4], more, j[5]}
  end
  pauses = {[FIRST] = pu}
else
  local best, bestpri, besti -- bestpri: the best job's priority as ZRANGE gave it (a string)
  local tops = 0 -- ready jobs seen: each tube's first two
  -- By ARGV index, made with the first tube's slot (a table's growth costs a rehash):
  pauses = {[FIRST] = false}
  local woke = {[FIRST] = false} -- tick made a job of the tube reservable
  local ready = {[FIRST] = 0} -- the tube's ready jobs seen (at most two)
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
          -- The tube counts as having nothing ready; a freed slot publishes it, a token's
          -- time is in the reply's next.
          act(t, at and 'rate' or 'max-reserved', 'defer')
          tokens = tokens or {}
          top, tokens[i] = {}, at
        end
      end
      ready[i] = #top / 2
      tops = tops + ready[i]
      if top[1] then
        local better = not best
        if not better then
          local pri, bp = top[2] + 0, bestpri + 0
          better = pri < bp or (pri == bp and top[1] < best)
        end
        if better then best, bestpri, besti = top[1], top[2], i end
      end
    end
  end
  -- Tell the other waiters of a tube whose job tick made reservable, unless this reserve takes
  -- the only ready job of the tube (the usual case when a waiter wakes for a delayed job): a
  -- publish would only make another waiter run this script for nothing.
  for i = FIRST, #ARGV do
    if woke[i] and not (i == besti and ready[i] == 1) then notify(ARGV[i]) end
  end

  if best then
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
end

local next, soon = -1, -1
local function consider(v)
  if v then
    v = v + 0
    if next < 0 or v < next then next = v end
  end
end
-- The session's own reservations past their deadline (in any tube) expire first.
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
  local d = redis.call('ZRANGE', kdelayed(t), '0', '0', 'WITHSCORES')
  consider(d[2])
  local r = redis.call('ZRANGE', kreserved(t), '0', '0', 'WITHSCORES')
  consider(r[2])
  consider(pauses[i]) -- still right: a pause that tick kept ends after NOW
  consider(tokens and tokens[i])
end
if mode >= 2 then
  local tubes = {}
  for i = FIRST, #ARGV do tubes[#tubes + 1] = ARGV[i] end
  wait(s, tubes)
end
return {0, next, NOW_US, soon}
