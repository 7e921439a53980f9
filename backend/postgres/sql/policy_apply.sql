-- policy_apply: after a policy was set or cleared (the statement before it, in the same
-- transaction), every existing job is filed under the policy that now governs its tube: its
-- expiry (created + expire-after, or none; a job that has expired stays so) and, under unique,
-- the hash of a ready or delayed job's body. Then every gateway reloads the policies and wakes
-- its waiting reserves (a raised or lifted limit may let them take a job). O(jobs): an
-- operator's rare act.
-- No parameters.
WITH governed AS (
    SELECT t.name, p.expire_after_us, coalesce(p.uniq, false) AS uniq
    FROM {{schema}}.tubes t LEFT JOIN LATERAL {{schema}}.tube_policy(t.name) p ON true
), filed AS (
    UPDATE {{schema}}.jobs j
    SET expires_at = CASE WHEN j.expires_at = 'infinity' THEN j.expires_at
                          WHEN g.expire_after_us > 0 THEN j.created_at + g.expire_after_us * interval '1 microsecond' END,
        body_hash = CASE WHEN g.uniq AND j.state IN (1, 2) THEN coalesce(j.body_hash, sha256(j.body)) ELSE j.body_hash END
    FROM governed g
    WHERE j.tube = g.name AND (
        (j.expires_at IS DISTINCT FROM 'infinity' AND j.expires_at IS DISTINCT FROM
            CASE WHEN g.expire_after_us > 0 THEN j.created_at + g.expire_after_us * interval '1 microsecond' END)
        OR (g.uniq AND j.state IN (1, 2) AND j.body_hash IS NULL))
), notified AS (
    SELECT pg_notify({{channel}}, {{origin}} || ' P')
)
SELECT count(*) FROM notified
