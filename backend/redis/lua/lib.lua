-- lib.lua: helpers shared by every operation (not an operation by itself). scripts.go loads
-- it once as the top of a Redis Functions library; each lua/<op>.lua becomes the body of a
-- function(KEYS, ARGV) that calls begin first, registered on its own and kept in OPS, through
-- which lua/batch.lua runs many operations in one call (the way the gateway calls them).
--
-- Calling convention shared by all operations:
--   KEYS[1] = <base>:stats   the namespace's global counters hash; declared so that a Cluster
--                            client routes the call to the namespace's slot. Every other key is
--                            built from <base> and carries the same hash tag, so it lives in
--                            the same slot.
--   ARGV[1] = <base>         "{prefix}", the namespace's hash tag
--   ARGV[2] = now            milliseconds since the epoch (a fraction is kept as NOW_US), or ""
--                            to use the Redis server's TIME
--   ARGV[3..]                operation-specific
--
-- Ids travel as 20-digit zero-padded strings: they are the sorted-set members, so that equal
-- scores order by id, and they name the job hashes.
--
-- Key layout (B = <base>):
--   B:stats                    hash: total (jobs put), timeouts, buryseq (an rseq field is
--                              unused: reservations are numbered per session)
--   B:ids                      INCR job id sequence, raised to the floor gateways pass (raise_ids)
--   B:x:<id>                   spread layout: the bucket keeping imported job <id>, which names
--                              this bucket (forward.lua)
--   B:tubes                    zset tube -> slot (list-tubes order, as beanstalkd's array)
--   B:t:<tube>                 hash: total, deletes, pauses, using, watching, pd (pause ms), pu (pause
--                              until), wt (reserves waiting on the tube, see notify)
--                              nd (a lower bound of the scores in the delayed and reserved sets,
--                              and of the expiry set's, 'n' when all are empty, absent when
--                              unknown: see tick), pol (the policy governing the tube, as
--                              B:policies holds it, absent when none sets a limit: see the
--                              policies below), rk ra (its rate bucket: tokens, when, µs)
--   B:t:<tube>:u               hash: body hash -> the ids of the tube's ready and delayed jobs
--                              with that body, space-separated (unique policy only)
--   B:t:<tube>:x               zset id -> when the job expires, ms (expire-after policy only;
--                              a reserved job is dropped at that time, added back when it returns)
--   B:policies                 hash: pattern -> policy (see parse_pol)
--   B:pt                       set of the tubes governed by a policy (the sweep ticks them)
--   B:t:<tube>:ready           zset id -> priority
--   B:t:<tube>:delayed         zset id -> due ms
--   B:t:<tube>:reserved        zset id -> TTR deadline ms
--   B:t:<tube>:buried          zset id -> bury sequence (FIFO)
--   B:j:<id>                   hash: b body, t tube, p pri, ttr, d delay, c created, s state,
--                              a due/deadline, r when it last became ready (ms; a reserve
--                              reports how long it was ready); o owner session and the
--                              counters nres ntim nrel nbur nkick are absent until set; under
--                              policies g (1: its tube is governed by one, so that a command on
--                              the job looks at the tube's policy only then), h its body's hash
--                              (unique), x when it expires (ms) and xd once it has expired (it
--                              expires once)
--   B:j:<id>:h                 list: the job's history, its last 32 events (see history), only
--                              for a job put while its tube's policy sets history
--   B:s:<session>              hash: use; wt the tubes its waiting reserve counts in, \n-joined;
--                              p its process, if the session was registered again (known);
--                              rq the session's reservations so far (reservation_seq); ad its
--                              client's address (for the histories)
--   B:s:<session>:w            set of watched tubes
--   B:s:<session>:r            zset id -> deadline of the session's reservations
--   B:procs                    set of gateway processes with sessions
--   B:p:<process>              set of the process's sessions
--   B:lease:<process>          heartbeat key with a TTL
--   B:suspect:<process>        ms (Redis TIME) a reaper first found the lease missing, with a
--                              TTL renewed by each reaper run that finds it missing still (reap)
--   channel B:ready            PUBLISH <tube> whenever a job of <tube> may have become reservable
--                              and a reserve waits on <tube> (see notify)

-- The call's context. Upvalues of every helper, set by begin at the start of each call: a
-- library's top level runs once, at load, and calls never interleave.
-- NOW is the call's time in whole milliseconds, which every due time and deadline is compared
-- with; NOW_US the same in microseconds, for a caller that times its next try by it.
local B, STATS, TUBES, CHAN, IDS, NOW, NOW_US

-- server_now_us is the Redis server's clock in microseconds.
local function server_now_us()
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2]
end

-- BATCH_NOW_US is the time batch.lua read for operations given none, in its call (nil outside);
-- NOWS is NOW as a string (ds), made on first use (now_s).
local BATCH_NOW_US, NOWS

-- TM and NTM: the memo's tube records and their count (see the memo below), forgotten when the
-- namespace changes: they hold its key names.
local TM, NTM = {}, 0

local function begin(keys, argv)
  if argv[1] ~= B then
    B = argv[1]
    TUBES, CHAN, IDS = B .. ':tubes', B .. ':ready', B .. ':ids'
    TM, NTM = {}, 0
  end
  STATS = keys[1]
  local us
  if argv[2] ~= '' then
    us = math.floor(tonumber(argv[2]) * 1000 + 0.5)
  else
    us = BATCH_NOW_US or server_now_us()
  end
  if us ~= NOW_US then
    NOW_US, NOW, NOWS = us, math.floor(us / 1000), nil
  end
end

-- SMALL_N and SMALL_S map the integers 0..99 to their decimal strings and back, made by the
-- first call (a library's load may not use the string library): the counts, modes and counters
-- operations parse and format are mostly small, and Lua's tonumber (strtod, twice) and
-- string.format cost about as much as a short command each.
local SMALL_N, SMALL_S

local function small_init()
  SMALL_N, SMALL_S = {}, {}
  for i = 0, 99 do
    SMALL_S[i] = string.format('%d', i)
    SMALL_N[SMALL_S[i]] = i
  end
end

-- ds formats an integral number without exponent notation.
local function ds(n) return SMALL_S[n] or string.format('%d', n) end

-- num is the number of s, a number or a string of one. (Lua 5.1's tonumber parses a string
-- twice, with strtod; arithmetic coerces it once: a hot path writes s + 0.)
local function num(s) return SMALL_N[s] or s + 0 end

-- now_s is NOW as a string: formatting costs Lua about as much as a short command.
local function now_s()
  if not NOWS then NOWS = ds(NOW) end
  return NOWS
end


-- The call's memo (why: a redis.call costs Redis ~0.55 µs beyond its command, each element
-- of its reply more, and Lua's own string, number and table work about as much again, so what a
-- call needs of a tube's hash is read once per top-level call, not once per operation of a
-- batch, and its counters are written once). Each top-level call starts with memo_reset and
-- ends with flush (batch.lua, and the wrapper of each operation's own function, see
-- scripts.go); the upvalues persist between calls, so nothing read may be trusted across that
-- boundary: GEN numbers the calls, and a tube's record is reset at its first use in a call.
--   TM     tube -> its record (tube_rec): its key names (kept while the namespace is the same:
--          built once, not per operation), ex whether it exists (B:tubes; 0: not known yet),
--          the tube hash's fields pu, nd (strings, false: absent; ndn nd as a number, false
--          until needed: ndnum) and wt, using, watching (numbers) once read (loaded); w_<field>
--          whether the field changed since; total, deletes, pauses increments of those fields
--          (read only by tube_stats, which flushes first), and if counts (read with the hot
--          fields in a batch, see COUNTS) total0, deletes0 their values as read (a string until
--          flush adds to it), so that flush writes all of a tube's fields with one HSET
--   DIRTY  records with pending writes (NDIRTY of them), in the order first written
--   SP_TOTAL, SP_TIMEOUTS  B:stats increments pending
-- Nothing is allocated per call but a new tube's record (a memo made of fresh tables costs a
-- lone call ~8 % more Redis instructions, and Lua's garbage collector for them).
-- Records are made by one constructor with all their fields: Lua 5.1 rehashes a table at each
-- power of two it grows through, which costs more than a short command.
-- The tube hash's hot fields are read and written only through trec/tset/tadd (a direct
-- redis.call would miss pending writes); readers of the other fields and of B:stats flush first
-- (tube_stats, stats).
-- COUNTS: the call reads a tube's total and deletes with its hot fields, to write them with
-- them (a batch, whose operations change both); a lone call adds to them (HINCRBY) and reads
-- two fields less.
local GEN, DIRTY, NDIRTY, SP_TOTAL, SP_TIMEOUTS, COUNTS = 0, {}, 0, 0, 0, false

-- ACT holds the policy actions the operation under way took, NACT entries, flattened as
-- {tube, policy, action, id}: its reply carries them (see with_actions).
local ACT, NACT = {}, 0

-- memo_reset starts a top-level call: batch true for batch.lua, false for a lone call.
local function memo_reset(batch)
  if not SMALL_S then small_init() end
  GEN, NDIRTY, SP_TOTAL, SP_TIMEOUTS, BATCH_NOW_US, NACT = GEN + 1, 0, 0, 0, nil, 0
  COUNTS = batch
end

-- tube_rec is tube t's record, reset if an earlier call left it.
local function tube_rec(t)
  local r = TM[t]
  if not r then
    if NTM >= 1000 then TM, NTM = {}, 0 end -- bounded: tube names come from clients
    local k = B .. ':t:' .. t
    r = {t = t, k = k, kready = k .. ':ready', kdelayed = k .. ':delayed',
      kreserved = k .. ':reserved', kburied = k .. ':buried', gen = 0, ex = 0, loaded = false,
      pu = false, nd = false, ndn = false, wt = 0, using = 0, watching = 0, w_pu = false,
      w_nd = false, w_wt = false, w_using = false, w_watching = false, total = 0, deletes = 0,
      pauses = 0, counts = false, total0 = 0, deletes0 = 0, dirty = false, pol = false,
      w_pol = false}
    TM[t], NTM = r, NTM + 1
  end
  if r.gen ~= GEN then
    r.gen, r.ex, r.loaded, r.counts, r.dirty = GEN, 0, false, false, false
    r.total, r.deletes, r.pauses = 0, 0, 0
    r.w_pu, r.w_nd, r.w_wt, r.w_using, r.w_watching, r.w_pol = false, false, false, false, false, false
  end
  return r
end

local function ktube(t) return tube_rec(t).k end
local function kready(t) return tube_rec(t).kready end
local function kdelayed(t) return tube_rec(t).kdelayed end
local function kreserved(t) return tube_rec(t).kreserved end
local function kburied(t) return tube_rec(t).kburied end
local function kjob(m) return B .. ':j:' .. m end
local function ksess(s) return B .. ':s:' .. s end
local function kwatch(s) return B .. ':s:' .. s .. ':w' end
local function ksres(s) return B .. ':s:' .. s .. ':r' end
local function kproc(p) return B .. ':p:' .. p end
local function klease(p) return B .. ':lease:' .. p end
local function ksuspect(p) return B .. ':suspect:' .. p end

-- trec returns tube t's record with its hot fields read (one HMGET the first time).
local function trec(t)
  local r = tube_rec(t)
  if not r.loaded then
    local h
    if COUNTS then
      h = redis.call('HMGET', r.k, 'pu', 'nd', 'wt', 'using', 'watching', 'pol', 'total', 'deletes')
      r.total0, r.deletes0 = h[7] or 0, h[8] or 0 -- converted only if written (flush)
    else
      h = redis.call('HMGET', r.k, 'pu', 'nd', 'wt', 'using', 'watching', 'pol')
    end
    r.loaded, r.counts, r.pu, r.nd, r.ndn, r.pol = true, COUNTS, h[1], h[2], false, h[6]
    r.wt, r.using, r.watching = num(h[3] or '0'), num(h[4] or '0'), num(h[5] or '0')
  end
  return r
end

-- ndnum is r.nd, a string other than 'n', as a number.
local function ndnum(r)
  if not r.ndn then r.ndn = r.nd + 0 end
  return r.ndn
end

local function mark(r)
  if not r.dirty then
    r.dirty = true
    NDIRTY = NDIRTY + 1
    DIRTY[NDIRTY] = r
  end
end

-- W is the name of each hot field's changed flag.
local W = {pu = 'w_pu', nd = 'w_nd', wt = 'w_wt', using = 'w_using', watching = 'w_watching',
  pol = 'w_pol'}

-- tset sets hot field f of tube t to v (pu, nd: a string or false for absent; the counters a
-- number).
local function tset(t, f, v)
  local r = trec(t)
  r[f] = v
  if f == 'nd' then r.ndn = false end
  r[W[f]] = true
  mark(r)
end

-- tadd adds n to field f of tube t: a hot counter as tset does, another (total, deletes,
-- pauses) without reading it.
local function tadd(t, f, n)
  if W[f] then
    tset(t, f, trec(t)[f] + n)
    return
  end
  local r = tube_rec(t)
  r[f] = r[f] + n
  mark(r)
end

-- tdrop deletes tube t's hash, with whatever was pending for it: its record is then that of
-- an empty hash.
local function tdrop(t)
  local r = tube_rec(t)
  redis.call('DEL', r.k)
  r.loaded, r.counts, r.pu, r.nd, r.ndn, r.wt, r.using, r.watching = true, true, false, false, false, 0, 0, 0
  r.pol = false
  r.w_pu, r.w_nd, r.w_wt, r.w_using, r.w_watching, r.w_pol = false, false, false, false, false, false
  r.total, r.deletes, r.pauses, r.total0, r.deletes0 = 0, 0, 0, 0, 0
end

-- sadd adds n to field f (total, timeouts) of B:stats, written at flush.
local function sadd(f, n)
  if f == 'total' then SP_TOTAL = SP_TOTAL + n else SP_TIMEOUTS = SP_TIMEOUTS + n end
end

-- SET and DEL are flush's argument lists, reused (their length is passed to unpack).
local SET, DEL = {}, {}
local HOT = {'pu', 'nd', 'wt', 'using', 'watching', 'pol'}

-- flush writes what the call left pending: per tube one HSET and one HDEL of the hot fields it
-- changed and one HINCRBY per other field it added to; one HINCRBY per B:stats field.
local function flush()
  for i = 1, NDIRTY do
    local r = DIRTY[i]
    DIRTY[i] = false
    local ns, nd = 0, 0
    if r.counts and (r.w_pu or r.w_nd or r.w_wt or r.w_using or r.w_watching or r.w_pol
        or (r.total ~= 0 and r.deletes ~= 0)) then
      -- Known values: written with the changed hot fields, one HSET instead of an HINCRBY each.
      -- (A counter alone is added to: no number to parse and format.)
      if r.total ~= 0 then
        r.total0, r.total = num(r.total0) + r.total, 0
        SET[ns + 1], SET[ns + 2], ns = 'total', ds(r.total0), ns + 2
      end
      if r.deletes ~= 0 then
        r.deletes0, r.deletes = num(r.deletes0) + r.deletes, 0
        SET[ns + 1], SET[ns + 2], ns = 'deletes', ds(r.deletes0), ns + 2
      end
    end
    for j = 1, 6 do
      local f = HOT[j]
      local w = W[f]
      if r[w] then
        local v = r[f]
        if type(v) == 'number' then v = ds(v) end
        if v then
          SET[ns + 1], SET[ns + 2], ns = f, v, ns + 2
        else
          nd = nd + 1
          DEL[nd] = f
        end
        r[w] = false
      end
    end
    if ns > 0 then redis.call('HSET', r.k, unpack(SET, 1, ns)) end
    if nd > 0 then redis.call('HDEL', r.k, unpack(DEL, 1, nd)) end
    if r.total ~= 0 then redis.call('HINCRBY', r.k, 'total', ds(r.total)) end
    if r.deletes ~= 0 then redis.call('HINCRBY', r.k, 'deletes', ds(r.deletes)) end
    if r.pauses ~= 0 then redis.call('HINCRBY', r.k, 'pauses', ds(r.pauses)) end
    r.total, r.deletes, r.pauses, r.dirty = 0, 0, 0, false
  end
  NDIRTY = 0
  if SP_TOTAL ~= 0 then redis.call('HINCRBY', STATS, 'total', ds(SP_TOTAL)) end
  if SP_TIMEOUTS ~= 0 then redis.call('HINCRBY', STATS, 'timeouts', ds(SP_TIMEOUTS)) end
  SP_TOTAL, SP_TIMEOUTS = 0, 0
end

local function tube_exists(t)
  local r = tube_rec(t)
  local e = r.ex
  if e == 0 then
    -- A tube's hash counts its users and watchers, and gc drops a tube with its hash and only
    -- when neither is left: a tube either counts exists, without asking B:tubes.
    if r.loaded and (r.using > 0 or r.watching > 0) then
      e = true
    else
      e = redis.call('ZSCORE', TUBES, t) ~= false
    end
    r.ex = e
  end
  return e
end

-- notify publishes tube t, whose job may have become reservable, if a reserve waits on it. A
-- waiting reserve counts itself in each watched tube's wt (wait, in the reserve script) until
-- its next try or its session's end (unwait); a count left behind by a failed call only costs
-- needless publishes. Correctness never depends on a publish: waiters also poll.
local function notify(t)
  if trec(t).wt > 0 then redis.call('PUBLISH', CHAN, t) end
end

-- due_added keeps tube t's nd (see tick) a lower bound after a job entered its delayed or
-- reserved set at score (ms, a string; n: the same as a number, if the caller has it). An absent
-- nd stays absent (tick then looks at the sets).
local function due_added(t, score, n)
  local r = trec(t)
  local nd = r.nd
  if nd and (nd == 'n' or (n or score + 0) < ndnum(r)) then
    tset(t, 'nd', score)
  end
end

-- to_delayed files job m of tube t as delayed until due (ms). A waiting reserve knows the
-- earliest due time it was told at its last try, and a job due sooner than any other of its
-- tube may be sooner than that: it must tell the waiters, or they take it up to a safety poll late.
local function to_delayed(t, m, due)
  redis.call('ZADD', kdelayed(t), due, m)
  due_added(t, due)
  if redis.call('ZRANK', kdelayed(t), m) == 0 then notify(t) end
end

-- unlink removes job m of tube t from the set of its state st (and from its owner o's set).
local function unlink(t, m, st, o)
  if st == 'ready' then redis.call('ZREM', kready(t), m)
  elseif st == 'delayed' then redis.call('ZREM', kdelayed(t), m)
  elseif st == 'buried' then redis.call('ZREM', kburied(t), m)
  elseif st == 'reserved' then
    redis.call('ZREM', kreserved(t), m)
    if o and o ~= '' then redis.call('ZREM', ksres(o), m) end
  end
end

-- Policies (backend.Policies). B:policies maps each pattern (a tube name or a glob with '*') to
-- its policy as "mr ea act mx rate burst u rd rdmax hi": max-reserves, expire-after (ns), expire
-- action (0 unset, 1 delete, 2 bury), max-reserved, rate (per second), burst, unique (1/0),
-- retry-delay and retry-delay-max (ns), history (1/0) (the last ones absent from a policy written
-- before they existed). A tube's hash
-- keeps the text of the policy that governs it (pol, a hot field: read with the others, so a
-- tube without one costs no command), set when the tube is made (ensure_tube) and whenever a
-- policy is set or cleared (repolicy_all). Every hook below starts from pol and does nothing
-- without it.

-- POLS caches parsed policies by their text, which never changes meaning (NPOLS of them).
local POLS, NPOLS = {}, 0

-- MAX_RETRY_MS is backend.MaxRetryDelay in ms: the backoff's cap when retry-delay-max is unset.
local MAX_RETRY_MS = 4294967295000

-- parse_pol is the policy of text s: {mr, ea (ms), bury, mx, rate, burst, u, rd (ms), rdmax
-- (ms), hi, limits}.
local function parse_pol(s)
  local p = POLS[s]
  if p then return p end
  local mr, ea, act, mx, rate, burst, u, rd, rdmax, hi =
    string.match(s, '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) ?(%d*) ?(%d*) ?(%d*)')
  ea = tonumber(ea)
  rd, rdmax = tonumber(rd) or 0, tonumber(rdmax) or 0
  p = {mr = tonumber(mr), ea = math.ceil(ea / 1000000), bury = act == '2', mx = tonumber(mx),
    rate = tonumber(rate), burst = math.max(tonumber(burst), 1), u = u == '1',
    rd = math.ceil(rd / 1000000), rdmax = math.ceil(rdmax / 1000000), hi = hi == '1'}
  if p.rdmax == 0 then p.rdmax = MAX_RETRY_MS end
  p.limits = p.mr > 0 or p.ea > 0 or p.mx > 0 or p.rate > 0 or p.u or p.rd > 0 or p.hi
  if NPOLS >= 1000 then POLS, NPOLS = {}, 0 end
  POLS[s], NPOLS = p, NPOLS + 1
  return p
end

-- tpol is the policy governing tube t, or nil.
local function tpol(t)
  local s = trec(t).pol
  if not s then return nil end
  return parse_pol(s)
end

local function kuniq(t) return tube_rec(t).k .. ':u' end
local function kexp(t) return tube_rec(t).k .. ':x' end

-- act records a policy action for the reply (see ACT).
local function act(t, policy, action, m)
  ACT[NACT + 1], ACT[NACT + 2], ACT[NACT + 3], ACT[NACT + 4] = t, policy, action, m or '0'
  NACT = NACT + 4
end

-- with_actions is res with the actions the operation took, if any: {'\0pa', res, actions...},
-- which the gateway unwraps (a marker no reply of an operation starts with).
local function with_actions(res)
  if NACT == 0 then return res end
  if res == nil then res = false end
  local out = {'\0pa', res}
  for i = 1, NACT do out[i + 2] = ACT[i] end
  NACT = 0
  return out
end

-- khist is job m's history list.
local function khist(m) return B .. ':j:' .. m .. ':h' end

-- history appends an event to job m's history if its tube's policy P (nil: none) keeps one: kind
-- (backend.EventKind), the session s that acted or held the job and its address (from its
-- hash), delay ms, the policy that acted. A put starts the list; a later event is appended only
-- to a list that exists (RPUSHX), so that a job put before history was set keeps none. An event
-- is "ms kind session address delay policy", fields possibly empty (backend.ParseEvent reads it);
-- the list keeps the last 32.
local function history(P, m, kind, s, delay, pol)
  if not (P and P.hi) then return end
  s = s or ''
  local addr = ''
  if s ~= '' then addr = redis.call('HGET', ksess(s), 'ad') or '' end
  local e = now_s() .. ' ' .. kind .. ' ' .. s .. ' ' .. addr .. ' ' .. (delay or '0') .. ' ' .. (pol or '')
  local n
  if kind == 'put' then n = redis.call('RPUSH', khist(m), e) else n = redis.call('RPUSHX', khist(m), e) end
  if n > 32 then redis.call('LTRIM', khist(m), '-32', '-1') end
end

-- glob_match tells whether tube t matches pattern p, '*' matching any run of characters.
local function glob_match(p, t)
  if p == t then return true end
  if not string.find(p, '*', 1, true) then return false end
  local lp = '^' .. string.gsub(string.gsub(p, '[^%w%*]', '%%%0'), '%*', '.*') .. '$'
  return string.match(t, lp) ~= nil
end

-- more_specific orders patterns as backend.MatchPolicy does: an exact name first, then more
-- literal characters, then fewer '*', then the smaller pattern.
local function more_specific(a, b)
  local sa = select(2, string.gsub(a, '%*', ''))
  local sb = select(2, string.gsub(b, '%*', ''))
  if (sa == 0) ~= (sb == 0) then return sa == 0 end
  if #a - sa ~= #b - sb then return #a - sa > #b - sb end
  if sa ~= sb then return sa < sb end
  return a < b
end

-- resolve is the text of the policy of all (B:policies, flattened) that governs tube t, or
-- false when none does or the one that does sets no limit, and the pattern that matched.
local function resolve(t, all)
  local best, text = nil, false
  for i = 1, #all, 2 do
    local p = all[i]
    if glob_match(p, t) and (not best or more_specific(p, best)) then best, text = p, all[i + 1] end
  end
  if text and not parse_pol(text).limits then return false, best end
  return text, best
end

-- jhash is job m's body hash, computed and kept on first use.
local function jhash(m)
  local h = redis.call('HGET', kjob(m), 'h')
  if not h then
    h = redis.sha1hex(redis.call('HGET', kjob(m), 'b'))
    redis.call('HSET', kjob(m), 'h', h)
  end
  return h
end

-- uq_add indexes job m, now ready or delayed in tube t, by its body (unique).
local function uq_add(t, m)
  local k, h = kuniq(t), jhash(m)
  local ids = redis.call('HGET', k, h)
  if not ids then
    redis.call('HSET', k, h, m)
    return
  end
  for id in string.gmatch(ids, '%d+') do
    if id == m then return end
  end
  redis.call('HSET', k, h, ids .. ' ' .. m)
end

-- uq_del removes job m, no longer ready or delayed in tube t, from the body index.
local function uq_del(t, m)
  local h = redis.call('HGET', kjob(m), 'h')
  if not h then return end -- never indexed
  local k = kuniq(t)
  local ids = redis.call('HGET', k, h)
  if not ids then return end
  local rest, n = {}, 0
  for id in string.gmatch(ids, '%d+') do
    n = n + 1
    if id ~= m then rest[#rest + 1] = id end
  end
  if #rest == 0 then
    redis.call('HDEL', k, h)
  elseif #rest < n then
    redis.call('HSET', k, h, table.concat(rest, ' '))
  end
end

-- x_add files job m of tube t for expiry (expire-after P.ea), unless it expired already.
local function x_add(t, m, P)
  local f = redis.call('HMGET', kjob(m), 'c', 'xd')
  if f[2] then return end
  local at = f[1] + P.ea
  redis.call('ZADD', kexp(t), at, m)
  redis.call('HSET', kjob(m), 'x', ds(at))
  due_added(t, ds(at), at)
end

-- entered applies tube t's policy P to job m that has just become state st (put, kicked,
-- returned, moved in, imported).
local function entered(t, m, st, P)
  if P.u and (st == 'ready' or st == 'delayed') then uq_add(t, m) end
  if P.ea > 0 then x_add(t, m, P) end
end

-- left applies tube t's policy P to job m that leaves state st (reserved, deleted, moved out).
local function left(t, m, st, P)
  if P.u and (st == 'ready' or st == 'delayed') then uq_del(t, m) end
  if P.ea > 0 and st ~= 'reserved' then redis.call('ZREM', kexp(t), m) end
end

-- to_buried moves job m of tube t (already out of its old set) to the end of its buried list;
-- buries += 1.
local function to_buried(t, m)
  redis.call('ZADD', kburied(t), redis.call('HINCRBY', STATS, 'buryseq', '1'), m)
  redis.call('HSET', kjob(m), 's', 'buried', 'o', '', 'a', '0')
  redis.call('HINCRBY', kjob(m), 'nbur', '1')
end

-- retry_backoff is how long policy P delays a job that came back after its n-th reservation
-- (ms): rd × 2^(n−1), at most rdmax (backend.Policy.RetryBackoff).
local function retry_backoff(P, n)
  local d = P.rd
  for _ = 2, n do
    if d >= P.rdmax then break end
    d = d * 2
  end
  return math.min(d, P.rdmax)
end

-- come_back applies tube t's policy P (if any) to job m, reserved until now and already out of
-- the reserved sets, that would become ready or delayed again at at (ms; its TTR ran out, its
-- holder left or released it with delay ms): past its expiry it is deleted or buried
-- (expire-after), else buried if it has been reserved max-reserves times, else delayed by its
-- retry backoff unless released with a delay of its own. Returns 'deleted', 'buried' or
-- 'delayed' if a policy took it, false when the caller requeues it.
local function come_back(t, m, P, delay, at)
  if not P then return false end
  local took = false
  if P.ea > 0 then
    local f = redis.call('HMGET', kjob(m), 'c', 'xd')
    if not f[2] and f[1] + P.ea <= NOW then
      redis.call('ZREM', kexp(t), m)
      if P.bury then
        to_buried(t, m)
        redis.call('HSET', kjob(m), 'xd', '1')
        act(t, 'expire-after', 'bury', m)
        history(P, m, 'buried', '', 0, 'expire-after')
        took = 'buried'
      else
        redis.call('DEL', kjob(m), khist(m))
        act(t, 'expire-after', 'delete', m)
        took = 'deleted'
      end
    end
  end
  if not took and P.mr > 0 and num(redis.call('HGET', kjob(m), 'nres') or '0') >= P.mr then
    to_buried(t, m)
    act(t, 'max-reserves', 'bury', m)
    history(P, m, 'buried', '', 0, 'max-reserves')
    if P.ea > 0 then x_add(t, m, P) end
    took = 'buried'
  end
  if not took and P.rd > 0 and delay == 0 then
    local d = retry_backoff(P, num(redis.call('HGET', kjob(m), 'nres') or '0'))
    local due = ds(at + d)
    redis.call('HSET', kjob(m), 'd', ds(d), 'o', '', 's', 'delayed', 'a', due)
    to_delayed(t, m, due)
    entered(t, m, 'delayed', P)
    act(t, 'retry-delay', 'delay', m)
    history(P, m, 'delayed', '', ds(d), 'retry-delay')
    took = 'delayed'
  end
  if took and P.mx > 0 then notify(t) end -- a slot freed
  return took
end

-- came_back applies tube t's policy P (if any) to job m, reserved until now and now ready or
-- delayed (st) again.
local function came_back(t, m, st, P)
  if not P then return end
  entered(t, m, st, P)
  if P.mx > 0 then notify(t) end -- a slot freed
end

-- expire_due applies tube t's expire-after to the jobs whose time has come: deleted or buried
-- when ready, delayed or buried; a reserved one is left to its holder (it is filed again when
-- it returns). Returns how many it deleted.
local function expire_due(t, P)
  local k = kexp(t)
  local due = redis.call('ZRANGEBYSCORE', k, '-inf', now_s())
  if #due == 0 then return 0 end
  redis.call('ZREMRANGEBYSCORE', k, '-inf', now_s())
  local gone = 0
  for _, m in ipairs(due) do
    local st = redis.call('HGET', kjob(m), 's')
    if st and st ~= 'reserved' then
      if P.u then uq_del(t, m) end
      if P.bury then
        if st ~= 'buried' then
          unlink(t, m, st)
          to_buried(t, m)
          act(t, 'expire-after', 'bury', m)
          history(P, m, 'buried', '', 0, 'expire-after')
        end
        redis.call('HSET', kjob(m), 'xd', '1')
      else
        unlink(t, m, st)
        redis.call('DEL', kjob(m), khist(m))
        act(t, 'expire-after', 'delete', m)
        gone = gone + 1
      end
    end
  end
  return gone
end

-- limited tells whether tube t's policy P keeps a reserve from taking a job of it now
-- (max-reserved reached, or no token in its rate bucket), and when a token accrues (ms), if
-- that is what it waits for.
local function limited(t, P)
  if P.mx > 0 and redis.call('ZCARD', kreserved(t)) >= P.mx then return true, false end
  if P.rate > 0 then
    local h = redis.call('HMGET', ktube(t), 'rk', 'ra')
    local tok = P.burst
    if h[1] then tok = math.min(P.burst, h[1] + (NOW_US - h[2]) * P.rate / 1000000) end
    if tok < 1 then return true, math.ceil((NOW_US + (1 - tok) * 1000000 / P.rate) / 1000) end
  end
  return false, false
end

-- took spends a token of tube t's rate bucket for a job a reserve took.
local function took(t, P)
  if P.rate == 0 then return end
  local h = redis.call('HMGET', ktube(t), 'rk', 'ra')
  local tok = P.burst
  if h[1] then tok = math.min(P.burst, h[1] + (NOW_US - h[2]) * P.rate / 1000000) end
  redis.call('HSET', ktube(t), 'rk', tostring(tok - 1), 'ra', ds(NOW_US))
end

-- policy_tube files tube t, which has just been made, under the policy that governs it.
local function policy_tube(t)
  local all = redis.call('HGETALL', B .. ':policies')
  if #all == 0 then return end
  local text = resolve(t, all)
  if text then
    tset(t, 'pol', text)
    redis.call('SADD', B .. ':pt', t)
  end
end

-- unwait removes session s's waiting reserve from the counts, if it is counted.
local function unwait(s)
  local wt = redis.call('HGET', ksess(s), 'wt')
  if not wt then return end
  for t in string.gmatch(wt, '[^\n]+') do
    -- A stale count (see above) may name a tube dropped since, or recreated with a fresh count.
    if tube_exists(t) then tset(t, 'wt', math.max(0, trec(t).wt - 1)) end
  end
  redis.call('HDEL', ksess(s), 'wt')
end

-- Tubes are kept as beanstalkd keeps them, an array in insertion order where a removed tube's
-- slot is taken by the last one: B:tubes scores each tube by its slot.
local function ensure_tube(t)
  if not tube_exists(t) then
    redis.call('ZADD', TUBES, redis.call('ZCARD', TUBES), t)
    tube_rec(t).ex = true
    policy_tube(t)
  end
end

local function drop_tube(t)
  local slot = redis.call('ZSCORE', TUBES, t)
  local last = redis.call('ZRANGE', TUBES, -1, -1)[1]
  redis.call('ZREM', TUBES, t)
  tube_rec(t).ex = false
  if last ~= t then redis.call('ZADD', TUBES, slot, last) end
end

local function tube_jobs(t)
  return redis.call('ZCARD', kready(t)) + redis.call('ZCARD', kdelayed(t))
    + redis.call('ZCARD', kreserved(t)) + redis.call('ZCARD', kburied(t))
end

-- gc deletes tube t (and its counters and pause) when no job and no session refers to it.
local function gc(t)
  if t == 'default' then return end
  local h = trec(t)
  if h.using > 0 or h.watching > 0 then return end
  if tube_jobs(t) > 0 or not tube_exists(t) then return end
  local governed = h.pol
  tdrop(t)
  drop_tube(t)
  if governed then redis.call('SREM', B .. ':pt', t) end
end

-- A store that lost data (a Redis restart without AOF; with appendfsync everysec, the last
-- second; a failover to a lagging replica) has forgotten the sessions begun since what it kept,
-- while their connections live on. So the operations that name a session restore what they know
-- of it when the store does not: known registers it again, uses and watches its tubes (the
-- reserve script knows the whole watch list; put and use the used tube). Nothing else depends
-- on a session's record: its reservations are in B:s:<session>:r and the job hashes. (An older
-- record kept by a lagging replica is completed the same way; a tube ignored since it was
-- written stays counted as watched until the session ends.)

-- proc_of is the gateway process of session s, whose id is "<process>.<n>" (backend.SessionID).
local function proc_of(s) return string.match(s, '^(.*)%.') or s end

-- known registers session s under its process again if the store has forgotten it, so that the
-- reaper ends it (returning its reservations, dropping its tube references) if that process
-- dies. One EXISTS when the session is known.
local function register_again(s)
  local proc = proc_of(s)
  redis.call('SADD', B .. ':procs', proc)
  redis.call('SADD', kproc(proc), s)
  redis.call('HSET', ksess(s), 'p', proc)
end

local function known(s)
  if redis.call('EXISTS', ksess(s)) == 1 then return end
  register_again(s)
end

-- reservation_seq numbers session s's next reservation (end_session returns a session's jobs in
-- that order) and does what known does, in one command while s is known: the session's hash
-- always holds use or p besides rq, so a hash that holds rq alone was just created by this
-- HINCRBY, the store having forgotten s. (Gateways that number reservations differently may
-- share the store: a session lives in one gateway process, which runs one version, so any two
-- of a session's reservations are numbered by the same scheme.)
local function reservation_seq(s)
  local q = redis.call('HINCRBY', ksess(s), 'rq', '1')
  if q == 1 and redis.call('HLEN', ksess(s)) == 1 then register_again(s) end
  return q
end

-- uses makes tube t, which exists, session s's used tube; the previous one loses the reference.
local function uses(s, t)
  local old = redis.call('HGET', ksess(s), 'use')
  if old == t then return end
  if not old then known(s) end
  redis.call('HSET', ksess(s), 'use', t)
  tadd(t, 'using', 1)
  if old then
    tadd(old, 'using', -1)
    gc(old)
  end
end

-- watches adds tube t to session s's watch list if it is not there, creating t if need be.
local function watches(s, t)
  if redis.call('SADD', kwatch(s), t) == 1 then
    ensure_tube(t)
    tadd(t, 'watching', 1)
  end
end

-- wait counts session s's reserve as waiting on tubes (its whole watch list, a Lua array), so
-- that notify publishes them. What the store forgot of the session (see known) is restored
-- first: without its watch list (or a watched tube) restored, no put would publish to it.
-- Run after the session's end (a try in flight when it ended), it brings the session back: the
-- reserve then ends it again (see Reserve).
local function wait(s, tubes)
  known(s)
  unwait(s)
  for _, t in ipairs(tubes) do
    watches(s, t)
    tadd(t, 'wt', 1)
  end
  redis.call('HSET', ksess(s), 'wt', table.concat(tubes, '\n'))
end

-- raise_ids raises the job id sequence to floor, the highest id a gateway has handed out: a store
-- that lost data has lost the latest ids too, and must not give them again.
local function raise_ids(floor)
  local cur = tonumber(redis.call('GET', IDS) or 0)
  if cur < floor then redis.call('SET', IDS, ds(floor)) end
end

-- to_ready puts job m (whose fields are already out of their old set) into t's ready set, ready
-- since at (ms; NOW if nil): a due time that passed before this call noticed it is when the job
-- became ready.
local function to_ready(t, m, pri, at)
  redis.call('ZADD', kready(t), pri, m)
  redis.call('HSET', kjob(m), 's', 'ready', 'o', '', 'a', '0', 'r', at or now_s())
end

-- tick_pause is the end of tick: an ended pause (pu, as read) is cleared, t notified if woke.
local function tick_pause(t, quiet, pu, woke, nd)
  local paused = false
  if pu then
    if pu + 0 <= NOW then
      tset(t, 'pu', false)
      redis.call('HDEL', ktube(t), 'pd')
      woke, pu = true, false
    else
      paused = true
    end
  end
  if woke and not quiet then notify(t) end
  return paused, pu, woke, nd
end

-- next_due stores tube t's nd, the earliest score in its delayed and reserved sets ('n': none),
-- and returns it; false, storing nothing, for a tube that does not exist (whose hash gc would
-- never delete).
local function next_due(t)
  local d = redis.call('ZRANGE', kdelayed(t), '0', '0', 'WITHSCORES')[2]
  local r = redis.call('ZRANGE', kreserved(t), '0', '0', 'WITHSCORES')[2]
  if r and (not d or r + 0 < d + 0) then d = r end
  local P = tpol(t)
  if P and P.ea > 0 then
    local x = redis.call('ZRANGE', kexp(t), '0', '0', 'WITHSCORES')[2]
    if x and (not d or x + 0 < d + 0) then d = x end
  end
  if not tube_exists(t) then return false end
  tset(t, 'nd', d or 'n')
  return d or 'n'
end

-- tick applies every due transition of tube t: delayed jobs whose time came become ready,
-- reservations past their deadline return to ready (timeouts += 1), an ended pause is cleared.
-- It notifies t when a job may have become reservable (unless quiet: the caller then does, if
-- need be), and returns whether t is paused now, when its pause ends (ms, as a string; false if
-- it is not paused), whether a job may have become reservable, and t's nd after it.
-- The tube hash's nd is at most every score in the two sets (due_added lowers it when a job
-- enters one; a job leaving one leaves it lower than need be): while NOW is before it, nothing
-- is due and the sets are not looked at, so a reserve reads one hash instead of two sets and
-- the hash (commands per job are what a job costs Redis).
local function tick(t, quiet)
  local woke = false
  local h = trec(t)
  local pu, nd = h.pu, h.nd
  if nd and (nd == 'n' or ndnum(h) > NOW) then
    return tick_pause(t, quiet, pu, woke, nd)
  end
  -- Reservations first: one backed off (retry-delay) to a time already past is due below.
  local expired = redis.call('ZRANGEBYSCORE', kreserved(t), '-inf', now_s(), 'WITHSCORES')
  local P = h.pol and parse_pol(h.pol)
  for i = 1, #expired, 2 do
    local m = expired[i]
    local f = redis.call('HMGET', kjob(m), 'p', 'o')
    if f[2] and f[2] ~= '' then redis.call('ZREM', ksres(f[2]), m) end
    redis.call('HINCRBY', kjob(m), 'ntim', '1')
    sadd('timeouts', 1)
    history(P, m, 'timed-out', f[2])
    if not come_back(t, m, P, 0, expired[i + 1] + 0) then
      to_ready(t, m, f[1], expired[i + 1])
      if P then entered(t, m, 'ready', P) end
    end
  end
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', kreserved(t), '-inf', now_s())
    woke = true
  end
  local due = redis.call('ZRANGEBYSCORE', kdelayed(t), '-inf', now_s(), 'WITHSCORES')
  for i = 1, #due, 2 do
    to_ready(t, due[i], redis.call('HGET', kjob(due[i]), 'p'), due[i + 1])
  end
  if #due > 0 then
    redis.call('ZREMRANGEBYSCORE', kdelayed(t), '-inf', now_s())
    woke = true
  end
  if P and P.ea > 0 then expire_due(t, P) end
  return tick_pause(t, quiet, pu, woke, next_due(t))
end

-- fresh returns job m's fields {tube, state, owner, due/deadline, expiry, governed} as of NOW,
-- or nil if it does not exist. Only when the job's own time has come is its tube ticked, so
-- the common case costs one HMGET.
local function fresh(m)
  local f = redis.call('HMGET', kjob(m), 't', 's', 'o', 'a', 'x', 'g')
  if not f[1] then return nil end
  if ((f[2] == 'delayed' or f[2] == 'reserved') and f[4] + 0 <= NOW)
      or (f[5] and f[2] ~= 'reserved' and f[5] + 0 <= NOW) then
    tick(f[1])
    f = redis.call('HMGET', kjob(m), 't', 's', 'o', 'a', 'x', 'g')
    if not f[1] then return nil end -- expired (expire-after)
  end
  return f
end

-- reserved_by returns job m's tube if it is reserved by session s now, else nil, and whether
-- a policy governs the tube.
local function reserved_by(m, s)
  local f = fresh(m)
  if f and f[2] == 'reserved' and f[3] == s then return f[1], f[6] end
  return nil
end

-- reserve_for makes job m of tube t (already unlinked) reserved by session s; returns the job
-- {id, tube, priority, body, ready for (ms; -1: not taken from ready, or not known)}.
-- (reservation_seq: s is findable from its process, so that the reaper can return the job.)
local function reserve_for(t, m, s, from_ready)
  local q = reservation_seq(s)
  local jk = kjob(m)
  local f = redis.call('HMGET', jk, 'ttr', 'p', 'b', 'nres', 'r', 'g')
  local dn = NOW + f[1]
  local deadline = ds(dn)
  redis.call('ZADD', kreserved(t), deadline, m)
  due_added(t, deadline, dn)
  redis.call('ZADD', ksres(s), deadline, m)
  -- rq numbers the reservation: a closing session returns its jobs in that order (end_session).
  redis.call('HSET', jk, 's', 'reserved', 'o', s, 'a', deadline, 'nres',
    ds(num(f[4] or '0') + 1), 'rq', ds(q))
  history(f[6] and tpol(t), m, 'reserved', s)
  f[6] = nil
  local ready_for = -1
  if from_ready and f[5] then ready_for = math.max(0, NOW - f[5]) end
  f[1], f[2], f[3], f[4], f[5] = m, t, f[2], f[3], ready_for -- the reply's table, reused
  return f
end

-- end_session returns session s's reservations to ready and drops its tube references. The jobs
-- go back in the order s reserved them, as beanstalkd returns them (each to a waiting reserve
-- first): it returns them in that order, flattened as {id, tube, paused (1/0)}, for the caller to
-- hand to its waiting reserves. A reservation already past its deadline times out first.
local function end_session(s, proc)
  local held = {}
  for _, m in ipairs(redis.call('ZRANGE', ksres(s), 0, -1)) do
    local f = fresh(m)
    if f and f[2] == 'reserved' and f[3] == s then
      held[#held + 1] = {m = m, t = f[1], q = tonumber(redis.call('HGET', kjob(m), 'rq') or 0)}
    end
  end
  table.sort(held, function(a, b)
    if a.q ~= b.q then return a.q < b.q end
    return a.m < b.m
  end)
  local back = {}
  for _, h in ipairs(held) do
    redis.call('ZREM', kreserved(h.t), h.m)
    local P = tpol(h.t)
    history(P, h.m, 'holder-left', s)
    if not come_back(h.t, h.m, P, 0, NOW) then
      to_ready(h.t, h.m, redis.call('HGET', kjob(h.m), 'p'))
      if P then entered(h.t, h.m, 'ready', P) end
      notify(h.t)
      local pu = trec(h.t).pu
      back[#back + 1] = h.m
      back[#back + 1] = h.t
      back[#back + 1] = (pu and tonumber(pu) > NOW) and 1 or 0
    end
  end
  redis.call('DEL', ksres(s))
  unwait(s)
  local u = redis.call('HGET', ksess(s), 'use')
  if u then
    tadd(u, 'using', -1)
    gc(u)
  end
  for _, w in ipairs(redis.call('SMEMBERS', kwatch(s))) do
    tadd(w, 'watching', -1)
    gc(w)
  end
  redis.call('DEL', ksess(s), kwatch(s))
  redis.call('SREM', kproc(proc), s)
  return back
end

-- kstate is the sorted set of tube t's jobs in state st, or nil for a state no bulk operation
-- or listing names; with reserved true, the reserved set too.
local function kstate(t, st, reserved)
  if st == 'ready' then return kready(t) end
  if st == 'delayed' then return kdelayed(t) end
  if st == 'buried' then return kburied(t) end
  if st == 'reserved' and reserved then return kreserved(t) end
  return nil
end

-- rank_after is the rank in zset k of the first member ordered after (score s, member m), in
-- O(log n) calls: the cursor's own member when it is still there with that score, else a binary
-- search among the members of score s (ordered by member, as equal scores are), so that a page
-- follows its cursor even when the cursor's job has gone. Never a scan of the set.
local function rank_after(k, s, m)
  local cur = redis.call('ZSCORE', k, m)
  if cur and tonumber(cur) == s then return redis.call('ZRANK', k, m) + 1 end
  local lo = redis.call('ZCOUNT', k, '-inf', '(' .. ds(s))
  local hi = redis.call('ZCOUNT', k, '-inf', ds(s))
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if redis.call('ZRANGE', k, mid, mid)[1] > m then hi = mid else lo = mid + 1 end
  end
  return lo
end

-- describe returns job m's stats-job figures {id, tube, state, priority, age ms, delay ms, ttr
-- ms, time-left ms, reserves, timeouts, releases, buries, kicks}, its tube's transitions
-- applied (fresh).
local function describe(m, t)
  local f = redis.call('HMGET', kjob(m), 's', 'p', 'c', 'd', 'ttr', 'a',
    'nres', 'ntim', 'nrel', 'nbur', 'nkick')
  local left = 0
  if f[1] == 'reserved' or f[1] == 'delayed' then left = tonumber(f[6]) - NOW end
  return {m, t, f[1], f[2], NOW - tonumber(f[3]), tonumber(f[4]), tonumber(f[5]), left,
    tonumber(f[7] or 0), tonumber(f[8] or 0), tonumber(f[9] or 0), tonumber(f[10] or 0),
    tonumber(f[11] or 0)}
end

-- repolicy files tube t under the policy of all (B:policies, flattened) that governs it now,
-- after the policy keyed changed was set or cleared: its jobs are marked governed or not, indexed
-- by body (unique) and filed for expiry as the new policy needs, or no longer; a rate bucket
-- starts full; its waiters are told (a raised cap or a lifted limit may let them take a job).
-- Its due transitions are applied under the old policy first. O(the tube's jobs) when what
-- its jobs need changes, as setting a policy is an operator's rare act.
local function repolicy(t, all, changed)
  tick(t)
  local r = trec(t)
  local old, new, by = r.pol, resolve(t, all)
  if old == new then
    if by == changed then redis.call('HDEL', r.k, 'rk', 'ra') end
    return
  end
  local O, N = old and parse_pol(old), new and parse_pol(new)
  tset(t, 'pol', new)
  redis.call('HDEL', r.k, 'rk', 'ra')
  local sets = {kready(t), kdelayed(t), kreserved(t), kburied(t)}
  if (old ~= false) ~= (new ~= false) then
    for _, k in ipairs(sets) do
      for _, m in ipairs(redis.call('ZRANGE', k, 0, -1)) do
        if new then redis.call('HSET', kjob(m), 'g', '1') else redis.call('HDEL', kjob(m), 'g') end
      end
    end
    if new then redis.call('SADD', B .. ':pt', t) else redis.call('SREM', B .. ':pt', t) end
  end
  if O and O.hi and not (N and N.hi) then
    for _, k in ipairs(sets) do
      for _, m in ipairs(redis.call('ZRANGE', k, 0, -1)) do redis.call('DEL', khist(m)) end
    end
  end
  local ou, nu = O and O.u, N and N.u
  if ou and not nu then
    redis.call('DEL', kuniq(t))
  elseif nu and not ou then
    for i = 1, 2 do
      for _, m in ipairs(redis.call('ZRANGE', sets[i], 0, -1)) do uq_add(t, m) end
    end
  end
  local oe, ne = O and O.ea or 0, N and N.ea or 0
  if oe ~= ne then
    redis.call('DEL', kexp(t))
    for _, k in ipairs(sets) do
      for _, m in ipairs(redis.call('ZRANGE', k, 0, -1)) do
        redis.call('HDEL', kjob(m), 'x')
        if ne > 0 then x_add(t, m, N) end
      end
    end
    tset(t, 'nd', false) -- unknown: the next tick looks at the sets
  end
  notify(t)
end

-- repolicy_all files every tube under the policy that governs it, after the policy keyed changed
-- was set or cleared.
local function repolicy_all(changed)
  local all = redis.call('HGETALL', B .. ':policies')
  for _, t in ipairs(redis.call('ZRANGE', TUBES, 0, -1)) do repolicy(t, all, changed) end
end
