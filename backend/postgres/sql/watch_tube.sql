-- watch_tube: adds tube $2 to session $1's watch list (no-op if there), creating the tube.
WITH added AS (
    INSERT INTO {{schema}}.session_watches (session_id, tube) VALUES ($1::text, $2::text)
    ON CONFLICT DO NOTHING
    RETURNING tube
)
INSERT INTO {{schema}}.tubes AS t (name, watching_count)
SELECT $2::text, count(*) FROM added
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
ON CONFLICT (name) DO UPDATE SET watching_count = t.watching_count + excluded.watching_count
