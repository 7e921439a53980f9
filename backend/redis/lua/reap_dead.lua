-- reap_dead: the spread layout's reaper in the home slot: as reap, the processes whose lease has
-- stayed missing for the grace, but their sessions live in buckets: it returns each such process
-- with the buckets of {prefix}:pb:<process>, for the gateway to end its sessions there
-- (reap_sessions), and drops the process's home records (reap_forget) only after that, so that a
-- reaper that dies midway is followed by the next run.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = grace ms, ARGV[4] = suspicion TTL ms (as reap's)
-- returns {process, n, bucket…, …}
local grace, ttl = tonumber(ARGV[3]), ARGV[4]
local now = math.floor(server_now_us() / 1000)
local out = {}
for _, proc in ipairs(redis.call('SMEMBERS', B .. ':procs')) do
  local sk = ksuspect(proc)
  if redis.call('EXISTS', klease(proc)) == 1 then
    redis.call('DEL', sk)
  else
    local since = redis.call('GET', sk)
    if not since then
      redis.call('SET', sk, ds(now), 'PX', ttl)
    elseif now - tonumber(since) < grace then
      redis.call('PEXPIRE', sk, ttl)
    else
      local bs = redis.call('SMEMBERS', B .. ':pb:' .. proc)
      out[#out + 1] = proc
      out[#out + 1] = #bs
      for _, bk in ipairs(bs) do out[#out + 1] = bk end
    end
  end
end
return out
