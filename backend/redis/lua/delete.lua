-- delete: remove a job that is ready, delayed, buried, or reserved by the session.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = id (padded)
-- returns 1, or 0 if missing or reserved by another session
local s, m = ARGV[3], ARGV[4]
local f = fresh(m)
if not f or (f[2] == 'reserved' and f[3] ~= s) then return 0 end
local t = f[1]
unlink(t, m, f[2], f[3])
local P = f[6] and tpol(t)
if P then
  left(t, m, f[2], P)
  if f[2] == 'reserved' then
    if P.ea > 0 then redis.call('ZREM', kexp(t), m) end
    if P.mx > 0 then notify(t) end -- a slot freed
  end
end
redis.call('DEL', kjob(m), khist(m))
tadd(t, 'deletes', 1)
gc(t)
return 1
