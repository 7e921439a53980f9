-- 009_gc_tubes_without_waits: collecting tubes no longer deadlocks.
-- gc_tubes runs at the end of every transaction that drops a tube reference, many at once. As
-- 002 wrote it, each deleted every unreferenced tube it saw, waiting for row locks, and then moved
-- the tube last in list order into the hole by updating that tube's row: two collectors, or a
-- collector and a write batch holding the last tube's row, waited for each other until
-- PostgreSQL's deadlock_timeout (1 s) broke the cycle, and every command queued behind them
-- stalled for that second.
--
-- Now a collector never waits for a tube row:
-- 1. It deletes only the unreferenced tubes no other transaction holds (SKIP LOCKED). A
--    transaction that holds a tube row is changing its references; if it drops the last one, it
--    runs gc_tubes itself before it commits and sees its own change.
-- 2. A removed tube's place in list order is taken by the last tube, as beanstalkd's list does,
--    but the move is recorded in tube_positions, a table that only collectors write, under an
--    advisory lock held to the end of their transaction. gc_tubes is the last statement of every
--    transaction that runs it, so the lock holder waits for nothing else: no cycle can form.
CREATE TABLE {{schema}}.tube_positions (
    name     text PRIMARY KEY,
    list_pos bigint NOT NULL
);

CREATE OR REPLACE FUNCTION {{schema}}.gc_tubes(names text[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = on AS $$
DECLARE
    gone_names text[];
    gone_pos bigint[];
    hole bigint;
    moved bigint;
    last record;
BEGIN
    -- DELETE re-checks the counts on the latest row version of the rows it locked.
    WITH candidates AS (
        SELECT t.name FROM {{schema}}.tubes t
        WHERE t.name <> 'default' AND t.jobs_count = 0 AND t.using_count = 0 AND t.watching_count = 0
          AND (names IS NULL OR t.name = ANY(names))
        FOR UPDATE SKIP LOCKED
    ), deleted AS (
        DELETE FROM {{schema}}.tubes t
        WHERE t.name IN (SELECT c.name FROM candidates c)
          AND t.jobs_count = 0 AND t.using_count = 0 AND t.watching_count = 0
        RETURNING t.name, t.list_pos
    )
    SELECT array_agg(d.name ORDER BY d.list_pos), array_agg(d.list_pos ORDER BY d.list_pos)
    INTO gone_names, gone_pos FROM deleted d;
    IF gone_names IS NULL THEN
        RETURN;
    END IF;

    PERFORM pg_advisory_xact_lock(hashtext($k$beangate.gc_tubes {{schema}}$k$));
    -- Each statement from here on sees the moves of collectors that committed before the lock was
    -- granted (a new snapshot per statement).
    FOR i IN 1 .. array_length(gone_names, 1) LOOP
        DELETE FROM {{schema}}.tube_positions p WHERE p.name = gone_names[i] RETURNING p.list_pos INTO moved;
        hole := coalesce(moved, gone_pos[i]);
        SELECT t.name, coalesce(p.list_pos, t.list_pos) AS pos INTO last
        FROM {{schema}}.tubes t LEFT JOIN {{schema}}.tube_positions p ON p.name = t.name
        ORDER BY 2 DESC LIMIT 1;
        IF last.pos > hole THEN
            INSERT INTO {{schema}}.tube_positions AS p (name, list_pos) VALUES (last.name, hole)
            ON CONFLICT (name) DO UPDATE SET list_pos = excluded.list_pos;
        END IF;
    END LOOP;
END;
$$;
