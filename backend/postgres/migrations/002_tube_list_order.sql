-- 002_tube_list_order: tube garbage collection as a function that keeps beanstalkd's list-tubes
-- order: removing a tube moves the last tube of the list into its place.
CREATE FUNCTION {{schema}}.gc_tubes(names text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    gone record;
BEGIN
    -- DELETE re-checks the counts on the latest row version after waiting for its lock, so a
    -- reference added concurrently keeps the tube.
    FOR gone IN
        DELETE FROM {{schema}}.tubes
        WHERE name <> 'default' AND jobs_count = 0 AND using_count = 0 AND watching_count = 0
          AND (names IS NULL OR name = ANY(names))
        RETURNING list_pos
    LOOP
        UPDATE {{schema}}.tubes SET list_pos = gone.list_pos
        WHERE list_pos = (SELECT max(list_pos) FROM {{schema}}.tubes) AND list_pos > gone.list_pos;
    END LOOP;
END;
$$;
