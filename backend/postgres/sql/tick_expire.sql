-- tick_expire: the second statement of a policy tick (policies.go): the jobs whose expire-after
-- time has come (jobs_expiry: ready, delayed or buried; a reserved job enters it again when it
-- comes back) are deleted, or buried under expire_action bury (one already buried stays as it
-- is); either way a job expires once ('infinity'). A job whose tube no longer has expire-after
-- is only taken out of the index. At most 1000 per tick; rows another transaction holds are
-- skipped (the next tick takes them). Expiry does not count in cmd-delete.
-- $1 now (NULL: database clock).
-- Returns (id, tube, action) per job acted on, then (NULL, tube, NULL) per tube left without
-- references, which the caller garbage-collects.
WITH picked AS (
    SELECT j.id FROM {{schema}}.jobs j
    WHERE j.expires_at IS NOT NULL AND j.state <> 3 AND j.expires_at <= {{now}}
    ORDER BY j.expires_at LIMIT 1000
), locked AS (
    SELECT j.id, j.tube, j.state FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state <> 3 AND j.expires_at <= {{now}}
    ORDER BY j.id
    FOR UPDATE SKIP LOCKED
), acts AS (
    SELECT l.id, l.tube, l.state, coalesce(p.expire_after_us > 0, false) AS live,
        coalesce(p.expire_action = 2, false) AS bury
    FROM locked l CROSS JOIN LATERAL {{schema}}.tube_policy(l.tube) p
), deleted AS (
    DELETE FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM acts WHERE live AND NOT bury))
    RETURNING j.id, j.tube
), buried AS (
    UPDATE {{schema}}.jobs j
    SET state = 4, due_at = NULL, expires_at = CASE WHEN a.live THEN 'infinity'::timestamptz END,
        buried_seq = CASE WHEN a.live AND j.state <> 4 THEN nextval('{{schema}}.buried_seq') ELSE j.buried_seq END,
        buries = j.buries + (a.live AND j.state <> 4)::int
    FROM acts a
    WHERE j.id = ANY(ARRAY(SELECT id FROM acts WHERE bury OR NOT live)) AND a.id = j.id
      AND (a.live OR j.state = 4)
), unfiled AS (
    -- No expire-after any more, and not buried: out of the index, as it is.
    UPDATE {{schema}}.jobs j SET expires_at = NULL
    WHERE j.id = ANY(ARRAY(SELECT id FROM acts WHERE NOT live AND state <> 4))
), per_tube AS (
    SELECT tube, count(*) AS n FROM deleted GROUP BY tube
), tubes_locked AS MATERIALIZED (
    -- The tube rows in name order, as every statement takes them (see delete.sql): the UPDATE
    -- alone would take them in the order its plan meets them, and could wait for one while
    -- holding another that a put or a session end waits for.
    SELECT t.name FROM {{schema}}.tubes t
    WHERE t.name = ANY(ARRAY(SELECT tube FROM per_tube))
    ORDER BY t.name
    FOR UPDATE
), counted AS (
    UPDATE {{schema}}.tubes t
    SET jobs_count = t.jobs_count - (SELECT n FROM per_tube p WHERE p.tube = t.name)
    WHERE t.name = ANY(ARRAY(SELECT name FROM tubes_locked))
    RETURNING t.name, t.jobs_count = 0 AND t.using_count = 0 AND t.watching_count = 0 AS unreferenced
)
SELECT id, tube, 'delete' FROM deleted
UNION ALL
SELECT id, tube, 'bury' FROM acts
WHERE live AND bury AND state <> 4
UNION ALL
SELECT NULL, name, NULL FROM counted WHERE unreferenced AND name <> 'default'
