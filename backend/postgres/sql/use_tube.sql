-- use_tube: makes tube $2 session $1's used tube, creating it if needed and dropping the
-- reference to the previous one (collected by gc_tubes after it). No row lock on the session:
-- a session issues its commands one at a time, and a locking read would not see the row once
-- "changed" has updated it within this same statement. Both tube rows are locked in name order,
-- as every statement that locks several tube rows takes them, so that none can deadlock.
WITH previous AS (
    SELECT used_tube FROM {{schema}}.sessions WHERE id = $1::text
), changed AS (
    UPDATE {{schema}}.sessions SET used_tube = $2::text
    WHERE id = $1::text AND used_tube <> $2::text
    RETURNING id
), counted AS (
    INSERT INTO {{schema}}.tubes AS t (name, using_count)
    SELECT name, d FROM (
        SELECT $2::text AS name, 1 AS d FROM changed
        UNION ALL
        -- The previous tube exists (this session references it): the -1 is never inserted.
        SELECT p.used_tube, -1 FROM previous p, changed
        WHERE EXISTS (SELECT 1 FROM {{schema}}.tubes t WHERE t.name = p.used_tube)
    ) r
    ORDER BY name
    ON CONFLICT (name) DO UPDATE SET using_count = t.using_count + excluded.using_count
)
SELECT WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
