-- move_jobs: move the first jobs of a tube in one state (ready, delayed or buried), in the
-- state's order, to another tube (created if need be), keeping id, priority, state, due time and
-- counters. Buried ones join the end of the new tube's buried jobs (a new bury sequence).
-- Waiting reserves of the new tube are told of ready jobs, and of a delayed job due before its
-- others (to_delayed).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = from, ARGV[4] = to, ARGV[5] = state, ARGV[6] = limit
-- returns how many moved
local from, to, st = ARGV[3], ARGV[4], ARGV[5]
if from == to or not tube_exists(from) then return 0 end
tick(from)
local k = kstate(from, st, false)
if not k then return 0 end
local ms = redis.call('ZRANGE', k, 0, tonumber(ARGV[6]) - 1, 'WITHSCORES')
if #ms == 0 then return 0 end
ensure_tube(to)
local dst = kstate(to, st, false)
local Pf, Pt = tpol(from), tpol(to)
for i = 1, #ms, 2 do
  local m, score = ms[i], ms[i + 1]
  redis.call('ZREM', k, m)
  if Pf then left(from, m, st, Pf) end
  redis.call('HSET', kjob(m), 't', to)
  if Pt then
    redis.call('HSET', kjob(m), 'g', '1')
    entered(to, m, st, Pt)
  elseif Pf then
    redis.call('HDEL', kjob(m), 'g')
  end
  if st == 'delayed' then
    to_delayed(to, m, score)
  elseif st == 'buried' then
    redis.call('ZADD', dst, redis.call('HINCRBY', STATS, 'buryseq', '1'), m)
  else
    redis.call('ZADD', dst, score, m)
  end
end
if st == 'ready' then notify(to) end
gc(from)
return #ms / 2
