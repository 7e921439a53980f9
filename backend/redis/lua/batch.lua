-- batch: run many operations in one call, in order, each exactly as if it had been called
-- alone: the gateway sends the calls of all its connections that queued up meanwhile as one
-- batch, which costs Redis one command instead of one per operation. Operations given no time
-- share one read of the server's clock (BATCH_NOW_US, which begin takes).
-- KEYS[1] = <base>:stats, as for every operation
-- ARGV[1] = <base>
-- ARGV[2..] = per operation: its name (lua/<name>.lua), its now (ms, or '' for the server's
--             TIME, read once for all of them, to the microsecond), the count n of its own arguments, then those n (its ARGV[3..])
-- returns an array with one reply per operation, in order: what the operation returned (false
--         for false or nothing, which a client reads as nil; with the policy actions it took, if
--         any, see with_actions in lib.lua), or an error reply if the
--         operation raised an error (its writes until then stay, as with a failing FCALL; the
--         operations after it still run)
-- One memo for the whole batch (see memo_reset in lib.lua): its operations share their reads of
-- the tube hashes and B:stats, and their writes to them are made once, at the end.
memo_reset(true)
local base, out = ARGV[1], {}
local i = 2
while i <= #ARGV do
  local f, t, n = OPS[ARGV[i]], ARGV[i + 1], num(ARGV[i + 2])
  if t == '' and not BATCH_NOW_US then BATCH_NOW_US = server_now_us() end
  -- One constructor: a table grown key by key is rehashed at every power of two.
  local argv = {base, t, unpack(ARGV, i + 3, i + 2 + n)}
  i = i + 3 + n
  NACT = 0
  local ok, res = pcall(f, KEYS, argv)
  if ok then res = with_actions(res) end
  if not ok then
    -- redis.call raises {err = msg}; a Lua runtime error is a string.
    if type(res) == 'table' and res.err then res = res.err end
    res = redis.error_reply(tostring(res))
  elseif res == nil then
    res = false
  end
  out[#out + 1] = res
end
flush()
BATCH_NOW_US = nil
return out
