-- floor_redis.lua: the least a Redis job queue can do per operation, for the lab's floor
-- (floor.go). No sessions, no counters, no wake-ups, no delays, no TTR expiry: a lower bound of
-- what beangate's own Lua (backend/redis/lua) costs, not a queue anyone could use.
-- KEYS[1] ids, KEYS[2] ready zset, KEYS[3] reserved zset, KEYS[4] job key prefix
-- ARGV[1] body, ARGV[2..] the operations of this round trip: p put, r reserve, d delete
-- returns one reply per operation, as a queue must answer its clients: a put the job's id, a
-- reserve {id, body} (false: nothing ready), a delete 1 (0: nothing reserved)
local t = redis.call('TIME') -- one clock per call, as beangate reads it
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local out = {}
for i = 2, #ARGV do
  local op = ARGV[i]
  if op == 'p' then
    local id = redis.call('INCR', KEYS[1])
    local m = string.format('%020d', id)
    redis.call('HSET', KEYS[4] .. m, 'b', ARGV[1], 'p', '1024', 'ttr', '60000', 's', 'ready')
    redis.call('ZADD', KEYS[2], 1024, m)
    out[i - 1] = id
  elseif op == 'r' then
    local top = redis.call('ZPOPMIN', KEYS[2])
    out[i - 1] = false
    if top[1] then
      local f = redis.call('HMGET', KEYS[4] .. top[1], 'b', 'ttr')
      redis.call('HSET', KEYS[4] .. top[1], 's', 'reserved')
      redis.call('ZADD', KEYS[3], now + f[2], top[1])
      out[i - 1] = {top[1], f[1]}
    end
  else
    local top = redis.call('ZPOPMIN', KEYS[3])
    out[i - 1] = 0
    if top[1] then
      redis.call('DEL', KEYS[4] .. top[1])
      out[i - 1] = 1
    end
  end
end
return out
