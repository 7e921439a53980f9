-- put: store a new job, delayed when delay > 0 (see to_delayed), else ready (notifying its tube).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = priority, ARGV[5] = delay ms, ARGV[6] = TTR ms, ARGV[7] = body,
-- ARGV[8] = floor: the highest job id the calling gateway has handed out (see raise_ids),
-- ARGV[9] = the putting session, whose used tube tube is, or '' (a put outside any session)
-- ARGV[10] = in the spread layout, the bucket (ARGV[1] is its base): the id is then spread_id's
-- returns the new job id (integer, from the namespace-wide INCR sequence, above floor), or under
-- a unique policy the id of the tube's ready or delayed job with the same body, if there is one
local t, pri, delay, floor, s = ARGV[3], ARGV[4], num(ARGV[5]), num(ARGV[8]), ARGV[9]
trec(t) -- read now: it tells ensure_tube that t exists, and notify who waits
ensure_tube(t)
-- A session the store forgot (see known in lib.lua) gets its used tube back.
if s ~= '' and redis.call('HEXISTS', ksess(s), 'use') == 0 then uses(s, t) end
local P = tpol(t)
if P and P.u then
  local ids = redis.call('HGET', kuniq(t), redis.sha1hex(ARGV[7]))
  for id in string.gmatch(ids or '', '%d+') do
    if redis.call('HGET', kjob(id), 'b') == ARGV[7] then -- a hash collision is not a duplicate
      act(t, 'unique', 'dedupe', id)
      return tonumber(id)
    end
  end
end
local id
if ARGV[10] then
  id = spread_id(num(ARGV[10]), floor)
else
  id = redis.call('INCR', IDS)
  if id <= floor then -- the store lost the latest ids (see raise_ids)
    id = floor + 1
    redis.call('SET', IDS, ds(id))
  end
end
local m = string.format('%020d', id)
local st, due = 'ready', '0'
if delay > 0 then st, due = 'delayed', ds(NOW + delay) end
-- Counters (nres, ntim, nrel, nbur, nkick) and the owner start absent, read as 0 / none; r (ready
-- since) is rewritten when a delayed job becomes ready.
redis.call('HSET', kjob(m), 'b', ARGV[7], 't', t, 'p', pri, 'ttr', ARGV[6], 'd', ARGV[5],
  'c', now_s(), 's', st, 'a', due, 'r', now_s())
if delay > 0 then
  to_delayed(t, m, due)
else
  redis.call('ZADD', kready(t), pri, m)
  notify(t)
end
if P then
  redis.call('HSET', kjob(m), 'g', '1')
  entered(t, m, st, P)
  history(P, m, 'put', s, ARGV[5])
end
tadd(t, 'total', 1)
sadd('total', 1)
return id
