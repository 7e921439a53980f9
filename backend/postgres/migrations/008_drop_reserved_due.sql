-- 008_drop_reserved_due: no index on the deadlines of all reservations.
-- jobs_reserved_due (due_at) WHERE state = 3 served only stats' store-wide counts of reservations
-- (before and past their deadline), which count every reservation anyway and are served as well
-- by jobs_reserved_tube (tube, due_at) WHERE state = 3. Every reserve and every delete of a
-- reserved job wrote or removed an entry in it: one index entry per job less (~5 % of
-- PostgreSQL's CPU and ~13 % of its WAL per job in the put-reserve-delete cycle).
DROP INDEX {{schema}}.jobs_reserved_due;
