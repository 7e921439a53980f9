-- promote_tubes: the first statement of a reserve batch's second round, run when reserve_many
-- found due jobs in its tubes. In tubes $2, delayed jobs whose time has come become ready and
-- reservations whose TTR has passed return to ready (counting a timeout), at most 500 (+ one per
-- session, $3) of each per tube, in due order, so a backlog of due jobs costs each reserve a
-- bounded batch instead of a sort of the whole backlog.
-- The rows are locked waiting, not skipped, and in id order: a due row another transaction is
-- promoting (promote.sql for a stats or peek, another gateway's reserve) is waited for, so that
-- the reserve statement after this one, whose snapshot is taken when it starts, sees it ready.
-- Skipping it let the reserve hand out a worse job, or wait for the next poll, while a better one
-- was due. Every statement that waits for job row locks takes them in id order, so they cannot
-- deadlock with one another; the reserve statement itself only skips.
-- With policies: an expired reservation of a job that has reached its tube's max-reserves is
-- buried instead (unless past its expiry: that is the policy tick's), else one under retry-delay
-- is delayed by its backoff from its deadline, or made ready if that has passed too (the policy
-- tick usually got there first; this covers a reservation another gateway made since).
-- $1 now (NULL: database clock), $2 tubes, $3 sessions.
WITH picked AS (
    SELECT c.id
    FROM unnest($2::text[]) AS w(name)
    CROSS JOIN LATERAL (
        (SELECT j.id FROM {{schema}}.jobs j
         WHERE j.tube = w.name AND j.state = 2 AND j.due_at <= {{now}}
         ORDER BY j.due_at LIMIT 500 + cardinality($3::text[]))
        UNION ALL
        (SELECT j.id FROM {{schema}}.jobs j
         WHERE j.tube = w.name AND j.state = 3 AND j.due_at <= {{now}}
         ORDER BY j.due_at LIMIT 500 + cardinality($3::text[]))
    ) c
), /*P*/acted AS (
    -- Re-checked after a wait: a row promoted or reserved meanwhile drops out.
    SELECT j.id, j.state, j.due_at,
        j.state = 3 AND coalesce((SELECT NOT (p.expire_after_us > 0 AND j.expires_at <= {{now}})
                                      AND p.max_reserves > 0 AND j.reserves >= p.max_reserves
                                  FROM {{schema}}.tube_policy(j.tube) p), false) AS bury,
        CASE WHEN j.state = 3 THEN coalesce((
            SELECT CASE WHEN p.expire_after_us > 0 AND j.expires_at <= {{now}} THEN 0
                        ELSE {{schema}}.retry_backoff_us(p, j.reserves) END
            FROM {{schema}}.tube_policy(j.tube) p), 0) ELSE 0 END AS backoff_us
    FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state IN (2, 3) AND j.due_at <= {{now}}
    ORDER BY j.id
    FOR UPDATE
), locked AS (
    SELECT id, state, bury, backoff_us, due_at + backoff_us * interval '1 microsecond' AS back_at,
        NOT bury AND backoff_us > 0 AND due_at + backoff_us * interval '1 microsecond' > {{now}} AS waits
    FROM acted
/*-P*//*N*/locked AS (
    -- Re-checked after a wait: a row promoted or reserved meanwhile drops out.
    SELECT j.id, j.state
    FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state IN (2, 3) AND j.due_at <= {{now}}
    ORDER BY j.id
    FOR UPDATE
/*-N*/), readied AS (
    UPDATE {{schema}}.jobs j
    -- Ready since its due time (the old due_at), not since this statement noticed it.
    SET state = 1, /*N*/ready_at = j.due_at,/*-N*/ due_at = NULL, reserved_by = NULL, reserved_at = NULL,
        timeouts = j.timeouts + (j.state = 3)::int/*P*/,
        ready_at = l.back_at, delay_us = CASE WHEN l.backoff_us > 0 THEN l.backoff_us ELSE j.delay_us END
    FROM locked l/*-P*/
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked/*P*/ WHERE NOT bury AND NOT waits/*-P*/))/*P*/ AND l.id = j.id/*-P*/
    RETURNING j.id
/*P*/), delayed AS (
    UPDATE {{schema}}.jobs j
    SET state = 2, due_at = l.back_at, reserved_by = NULL, reserved_at = NULL,
        timeouts = j.timeouts + 1, delay_us = l.backoff_us
    FROM locked l
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE waits)) AND l.id = j.id
), buried AS (
    UPDATE {{schema}}.jobs j
    SET state = 4, buried_seq = nextval('{{schema}}.buried_seq'), buries = j.buries + 1,
        timeouts = j.timeouts + 1, due_at = NULL, reserved_by = NULL, reserved_at = NULL
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE bury))
/*-P*/), counted AS (
    INSERT INTO {{schema}}.job_timeout_counts (n)
    SELECT count(*) FROM locked WHERE state = 3 HAVING count(*) > 0
)
SELECT count(*) FROM readied
WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
