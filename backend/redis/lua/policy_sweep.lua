-- policy_sweep: apply the due transitions of every tube a policy governs, so that its policy acts
-- on time even when no command looks at the tube (an expiry, a TTR that ran out under
-- max-reserves); a tube emptied by expiry and referenced by nobody vanishes. Any gateway may run
-- it, as often as it likes: a tube with nothing due costs a read of its hash.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV: only the common ones
-- returns how many tubes a policy governs
local governed = redis.call('SMEMBERS', B .. ':pt')
for _, t in ipairs(governed) do
  if tube_exists(t) then
    tick(t)
    gc(t)
  else
    redis.call('SREM', B .. ':pt', t)
  end
end
return #governed
