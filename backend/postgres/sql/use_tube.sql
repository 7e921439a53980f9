-- use_tube: makes tube $2 session $1's used tube, creating it if needed and dropping the
-- reference to the previous one (collected by gc_tubes after it). No row lock on the session:
-- a session issues its commands one at a time, and a locking read would not see the row once
-- "changed" has updated it within this same statement.
WITH previous AS (
    SELECT used_tube FROM {{schema}}.sessions WHERE id = $1::text
), changed AS (
    UPDATE {{schema}}.sessions SET used_tube = $2::text
    WHERE id = $1::text AND used_tube <> $2::text
    RETURNING id
), added AS (
    INSERT INTO {{schema}}.tubes AS t (name, using_count)
    SELECT $2::text, count(*) FROM changed
    ON CONFLICT (name) DO UPDATE SET using_count = t.using_count + excluded.using_count
)
UPDATE {{schema}}.tubes SET using_count = using_count - 1
WHERE name = (SELECT used_tube FROM previous) AND EXISTS (SELECT 1 FROM changed)
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
