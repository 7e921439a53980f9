-- policy_apply: after a policy was set or cleared (the statement before it, in the same
-- transaction), every existing job is filed under the policy that now governs its tube: its
-- expiry (created + expire-after, or none; a job that has expired stays so) and, under unique,
-- the hash of a ready or delayed job's body; a job of a tube that no longer keeps histories drops
-- its own. Then, if $4, the rate buckets of the tubes the
-- pattern $1 (as a LIKE pattern $2 if it is a glob, $3) may govern start full again. Then every
-- gateway reloads the policies and wakes its waiting reserves (a raised or lifted limit may let
-- them take a job). O(jobs): an operator's rare act.
-- Job rows are locked first, in id order, then the buckets, as every statement takes its rows
-- (see lock_tubes.sql): the UPDATE alone took them in the order of its join, and a bucket
-- emptied before the jobs were filed was a row a reserve of a rate-limited tube waited for
-- while holding a job this statement waited for.
WITH governed AS (
    SELECT t.name, p.expire_after_us, coalesce(p.uniq, false) AS uniq, coalesce(p.history, false) AS history
    FROM {{schema}}.tubes t LEFT JOIN LATERAL {{schema}}.tube_policy(t.name) p ON true
), stale AS (
    SELECT j.id FROM {{schema}}.jobs j JOIN governed g ON j.tube = g.name
    WHERE (j.expires_at IS DISTINCT FROM 'infinity' AND j.expires_at IS DISTINCT FROM
            CASE WHEN g.expire_after_us > 0 THEN j.created_at + g.expire_after_us * interval '1 microsecond' END)
        OR (g.uniq AND j.state IN (1, 2) AND j.body_hash IS NULL)
        OR (j.history IS NOT NULL AND NOT g.history)
), locked AS MATERIALIZED (
    SELECT j.id FROM {{schema}}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM stale))
    ORDER BY j.id
    FOR UPDATE
), filed AS (
    UPDATE {{schema}}.jobs j
    SET expires_at = CASE WHEN j.expires_at = 'infinity' THEN j.expires_at
                          WHEN g.expire_after_us > 0 THEN j.created_at + g.expire_after_us * interval '1 microsecond' END,
        body_hash = CASE WHEN g.uniq AND j.state IN (1, 2) THEN coalesce(j.body_hash, sha256(j.body)) ELSE j.body_hash END,
        history = CASE WHEN g.history THEN j.history END
    FROM governed g
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked)) AND j.tube = g.name
    RETURNING j.id
), refilled AS (
    DELETE FROM {{schema}}.tube_rates r
    WHERE $4::boolean AND (r.tube = $1::text OR ($3::boolean AND r.tube LIKE $2::text))
      AND (SELECT count(*) FROM filed) >= 0
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' P')
)
SELECT count(*) FROM notified
