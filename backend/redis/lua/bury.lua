-- bury: move a job reserved by the session to the end of its tube's buried list, with a new
-- priority; buries += 1.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = id (padded), ARGV[5] = priority
-- returns 1, or 0 unless the job is reserved by the session
local s, m, pri = ARGV[3], ARGV[4], ARGV[5]
local t, governed = reserved_by(m, s)
if not t then return 0 end
unlink(t, m, 'reserved', s)
redis.call('HSET', kjob(m), 'p', pri)
to_buried(t, m)
local P = governed and tpol(t)
history(P, m, 'buried', s)
if P then
  if P.ea > 0 then x_add(t, m, P) end
  if P.mx > 0 then notify(t) end -- a slot freed
end
return 1
