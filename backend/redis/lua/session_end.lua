-- session_end: forget a session: its reservations return to ready at once, in the order they
-- were reserved (counters unchanged), its tube references are dropped and unreferenced empty tubes vanish. Ending an
-- ended (or unknown) session changes nothing, so a failed end may be retried.
-- KEYS[1] = <base>:stats, the one key of every operation (see lib.lua)
-- ARGV[3] = session, ARGV[4] = process
-- returns the returned jobs in the order they were reserved, flattened as {id, tube, paused}
return end_session(ARGV[3], ARGV[4])
