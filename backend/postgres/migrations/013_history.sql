-- 013_history: jobs' histories (backend.Histories), for the jobs put into a tube whose policy
-- sets history. The statements that change a job do not write its history themselves: a trigger
-- reads each change of a job row that keeps one (history NOT NULL) and appends what happened, so
-- that every path to a state change — a statement of a gateway, a tick, another gateway's sweep
-- — is recorded the same way, and a job without a history costs its statements nothing (the
-- trigger's WHEN is false, and a NULL column is no byte of the row).
--
-- jobs.history: the job's events, oldest first, at most 32, each "µs kind session address
-- delay-µs policy" (fields possibly empty: job_event); NULL for a job that keeps none.
-- sessions.addr: the client's address, as BeginSession registered it, copied into the events.
-- policies.history: the policy keeps its tubes' jobs' histories.
-- Adding nullable columns, or columns with a constant default, rewrites no row.
ALTER TABLE {{schema}}.jobs ADD COLUMN history text[];
ALTER TABLE {{schema}}.sessions ADD COLUMN addr text NOT NULL DEFAULT '';
ALTER TABLE {{schema}}.policies ADD COLUMN history boolean NOT NULL DEFAULT false;

-- job_event is one event as jobs.history keeps it, stamped with the database's clock, naming
-- session and its address (a session that has ended has none).
CREATE FUNCTION {{schema}}.job_event(kind text, session text, delay_us bigint, policy text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    addr text := '';
BEGIN
    IF coalesce(session, '') <> '' THEN
        SELECT s.addr INTO addr FROM {{schema}}.sessions s WHERE s.id = session;
    END IF;
    RETURN (extract(epoch FROM clock_timestamp()) * 1000000)::bigint || ' ' || kind || ' '
        || coalesce(session, '') || ' ' || coalesce(addr, '') || ' ' || coalesce(delay_us, 0) || ' '
        || coalesce(policy, '');
END;
$$;

-- job_history_change appends to NEW.history the events of the change from OLD to NEW, read from
-- the columns every statement maintains: a reservation ending (its counters say how: a timeout,
-- a release, else its holder leaving; a bury by the worker is marked by bury.sql in
-- beangate.bury, a release's own delay by release.sql in beangate.release, as "id delay-µs"),
-- then a policy acting on it (buried, or delayed by retry-delay), a reservation, a touch (marked
-- by touch.sql in beangate.touch), a kick, an expiry's bury. A mark names the job it is for, so
-- that one left in the transaction is no other job's.
CREATE FUNCTION {{schema}}.job_history_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ev text[] := '{}';
    holder text := CASE WHEN OLD.state = 3 THEN OLD.reserved_by END;
    ended boolean := OLD.state = 3 AND (NEW.state <> 3 OR NEW.reserved_by IS DISTINCT FROM OLD.reserved_by
                                        OR NEW.reserves > OLD.reserves);
    worker_bury boolean := coalesce(current_setting('beangate.bury', true) = NEW.id::text, false);
    released text[] := string_to_array(current_setting('beangate.release', true), ' ');
    asked bigint;
    n integer;
BEGIN
    IF ended THEN
        IF NEW.timeouts > OLD.timeouts THEN
            ev := ev || {{schema}}.job_event('timed-out', holder, 0, '');
        ELSIF NEW.releases > OLD.releases THEN
            IF released[1] = NEW.id::text THEN asked := released[2]::bigint; END IF;
            ev := ev || {{schema}}.job_event('released', holder, coalesce(asked, NEW.delay_us), '');
        ELSIF NEW.state = 4 AND worker_bury THEN
            ev := ev || {{schema}}.job_event('buried', holder, 0, '');
        ELSE
            ev := ev || {{schema}}.job_event('holder-left', holder, 0, '');
        END IF;
        IF NEW.state = 4 AND NOT worker_bury THEN
            ev := ev || {{schema}}.job_event('buried', NULL, 0,
                CASE WHEN NEW.expires_at = 'infinity' AND OLD.expires_at IS DISTINCT FROM 'infinity'
                     THEN 'expire-after' ELSE 'max-reserves' END);
        ELSIF NEW.state = 2 AND coalesce(asked, 0) = 0 THEN
            ev := ev || {{schema}}.job_event('delayed', NULL, NEW.delay_us, 'retry-delay');
        END IF;
    END IF;
    IF NEW.state = 3 AND (OLD.state <> 3 OR ended) THEN
        ev := ev || {{schema}}.job_event('reserved', NEW.reserved_by, 0, '');
    ELSIF NEW.state = 3 AND current_setting('beangate.touch', true) = NEW.id::text THEN
        ev := ev || {{schema}}.job_event('touched', holder, 0, '');
    END IF;
    IF NEW.kicks > OLD.kicks THEN
        ev := ev || {{schema}}.job_event('kicked', NULL, 0, '');
    END IF;
    IF NEW.state = 4 AND OLD.state IN (1, 2) THEN
        ev := ev || {{schema}}.job_event('buried', NULL, 0, 'expire-after');
    END IF;
    IF cardinality(ev) > 0 THEN
        NEW.history := NEW.history || ev;
        n := cardinality(NEW.history);
        IF n > 32 THEN
            NEW.history := NEW.history[n - 31:n];
        END IF;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER jobs_history BEFORE UPDATE ON {{schema}}.jobs
FOR EACH ROW WHEN (NEW.history IS NOT NULL) EXECUTE FUNCTION {{schema}}.job_history_change();
