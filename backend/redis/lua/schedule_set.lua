-- schedule_set: create or replace a schedule (backend.Schedules). A replaced schedule keeps its
-- last tick when its timing is the same, so that gateways setting their config's schedules at
-- each start neither repeat nor lose a tick; a new one, or a new timing, starts from now.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = name, ARGV[4] = tube, ARGV[5] = body, ARGV[6] = priority, ARGV[7] = TTR ms,
-- ARGV[8] = delay ms, ARGV[9] = cron, ARGV[10] = timezone, ARGV[11] = every ms
-- Keys: B:sc is the set of schedule names; B:sc:<name> the schedule's hash: t b p ttr d cron tz
-- ev as given, l its last tick (ms), j the last job's id, r when it was put (ms; j and r absent
-- until the first run).
-- returns 1
local k = B .. ':sc:' .. ARGV[3]
local old = redis.call('HMGET', k, 'cron', 'tz', 'ev', 'l')
local last = now_s()
if old[4] and old[1] == ARGV[9] and old[2] == ARGV[10] and old[3] == ARGV[11] then last = old[4] end
redis.call('HSET', k, 't', ARGV[4], 'b', ARGV[5], 'p', ARGV[6], 'ttr', ARGV[7], 'd', ARGV[8],
  'cron', ARGV[9], 'tz', ARGV[10], 'ev', ARGV[11], 'l', last)
redis.call('SADD', B .. ':sc', ARGV[3])
return 1
