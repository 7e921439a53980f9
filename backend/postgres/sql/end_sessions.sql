-- end_sessions: forgets sessions $1: their reserved jobs return to ready at once (counters
-- unchanged), their tube references are dropped (gc_tubes runs after it). Announces the tubes
-- that got ready jobs and returns them, one entry per job, for the local waiters. Not worth a WAL
-- flush: after a crash the sessions are gone and their reservations ready anyway.
WITH ended AS (
    DELETE FROM {{schema}}.sessions WHERE id = ANY($1::text[]) RETURNING used_tube
), unwatched AS (
    DELETE FROM {{schema}}.session_watches WHERE session_id = ANY($1::text[]) RETURNING tube
), returned AS (
    UPDATE {{schema}}.jobs SET state = 1, reserved_by = NULL, due_at = NULL
    WHERE state = 3 AND reserved_by = ANY($1::text[])
    RETURNING tube
), refs AS (
    SELECT tube, sum(u) AS u, sum(w) AS w FROM (
        SELECT used_tube AS tube, 1 AS u, 0 AS w FROM ended
        UNION ALL
        SELECT tube, 0, 1 FROM unwatched
    ) r GROUP BY tube
), dropped AS (
    UPDATE {{schema}}.tubes t
    SET using_count = t.using_count - refs.u, watching_count = t.watching_count - refs.w
    FROM refs WHERE t.name = refs.tube
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' ' || count(*) || ' ' || tube) FROM returned GROUP BY tube
)
SELECT array(SELECT tube FROM returned)
WHERE (SELECT count(*) FROM notified) >= 0
  AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
