-- list_jobs: a page of a tube's jobs in one state, in the state's order (its sorted set's:
-- ready by priority then id, delayed by due time, buried by bury sequence, reserved by deadline;
-- equal scores by id, the padded member), after a cursor. Ranges only: the start is found in
-- O(log n) (rank_after), then ZRANGE by rank.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = tube, ARGV[4] = state, ARGV[5] = the cursor's score ('' for the first page),
-- ARGV[6] = the cursor's member, ARGV[7] = how many, ARGV[8] = body bytes to return
-- returns nil if the tube does not exist, else per job: describe's 13 figures, the body's size,
-- the body's first bytes, the job's score
local t, st = ARGV[3], ARGV[4]
if not tube_exists(t) then return false end
tick(t)
local k = kstate(t, st, true)
if not k then return {} end
local start = 0
if ARGV[5] ~= '' then start = rank_after(k, tonumber(ARGV[5]), ARGV[6]) end
local ms = redis.call('ZRANGE', k, start, start + tonumber(ARGV[7]) - 1, 'WITHSCORES')
local n = tonumber(ARGV[8])
local out = {}
for i = 1, #ms, 2 do
  local m = ms[i]
  local d = describe(m, t)
  local b = redis.call('HGET', kjob(m), 'b') or ''
  d[#d + 1] = #b
  d[#d + 1] = string.sub(b, 1, n)
  d[#d + 1] = ms[i + 1]
  for _, v in ipairs(d) do out[#out + 1] = v end
end
return out
