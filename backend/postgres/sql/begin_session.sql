-- begin_session: registers session $1 of gateway process $2, using and watching default; $3 its
-- client's address (for the jobs' histories).
-- Session bookkeeping is not worth a WAL flush: after a crash every session is gone anyway.
WITH created AS (
    INSERT INTO {{schema}}.sessions (id, process, used_tube, addr) VALUES ($1::text, $2::text, 'default', $3::text)
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), watched AS (
    INSERT INTO {{schema}}.session_watches (session_id, tube)
    SELECT id, 'default' FROM created
    ON CONFLICT DO NOTHING
    RETURNING 1
)
-- The tube row last, as every statement takes the session's rows before its tubes' (see
-- lock_tubes.sql): the condition runs watched first, which PostgreSQL, left to itself, ran last.
INSERT INTO {{schema}}.tubes AS t (name, using_count, watching_count)
SELECT 'default', count(*), count(*) FROM created
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
  AND (SELECT count(*) FROM watched) >= 0
ON CONFLICT (name) DO UPDATE
SET using_count = t.using_count + excluded.using_count,
    watching_count = t.watching_count + excluded.watching_count
