-- tube_stats: describe a tube (after its due transitions).
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube
-- returns {urgent, ready, reserved, delayed, buried, total, using, watching, deletes,
--          pauses, pause ms, pause-time-left ms}, or nil if the tube does not exist
local t = ARGV[3]
if not tube_exists(t) then return false end
tick(t)
flush() -- the tube hash as of now (see the memo in lib.lua)
local f = redis.call('HMGET', ktube(t), 'total', 'using', 'watching', 'deletes', 'pauses', 'pd', 'pu')
local left = 0
if f[7] then left = tonumber(f[7]) - NOW end
return {redis.call('ZCOUNT', kready(t), '-inf', '(1024'), redis.call('ZCARD', kready(t)),
  redis.call('ZCARD', kreserved(t)), redis.call('ZCARD', kdelayed(t)), redis.call('ZCARD', kburied(t)),
  tonumber(f[1] or 0), tonumber(f[2] or 0), tonumber(f[3] or 0), tonumber(f[4] or 0),
  tonumber(f[5] or 0), tonumber(f[6] or 0), left}
